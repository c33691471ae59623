'use strict';
const fs = require('fs');
const path = require('path');

const src = path.join(__dirname, '..', 'icons');
const out = path.join(__dirname, '..', 'dist', 'react');
fs.mkdirSync(out, { recursive: true });
const names = [];
for (const f of fs.readdirSync(src).filter((f) => f.endsWith('.svg'))) {
  const name = f.replace(/\.svg$/, '').replace(/(^|-)(\w)/g, (_, __, c) => c.toUpperCase());
  const body = fs.readFileSync(path.join(src, f), 'utf8').replace('<svg', '<svg {...props}');
  fs.writeFileSync(path.join(out, `${name}.jsx`), `export const ${name} = (props) => (${body});\n`);
  names.push(name);
}
fs.writeFileSync(path.join(out, 'index.js'), names.map((n) => `export { ${n} } from './${n}.jsx';`).join('\n'));
console.log(`built ${names.length} components`);
