'use strict';
const fs = require('fs');
const path = require('path');

const cssFile = process.argv[2];
if (!cssFile) { console.error('usage: node inline.js file.css'); process.exit(2); }
const dir = path.dirname(path.resolve(cssFile));
const MIME = { '.svg': 'image/svg+xml', '.png': 'image/png' };
const LIMIT = 4 * 1024;
let count = 0;

const out = fs.readFileSync(cssFile, 'utf8').replace(/url\((['"]?)([^'")]+)\1\)/g, (m, q, ref) => {
  if (/^(data:|https?:|\/\/)/.test(ref)) return m;
  const file = path.resolve(dir, ref);
  const mime = MIME[path.extname(file).toLowerCase()];
  if (!mime || !fs.existsSync(file) || fs.statSync(file).size > LIMIT) return m;
  count++;
  return `url(data:${mime};base64,${Buffer.from(fs.readFileSync(file)).toString('base64')})`;
});

const dest = cssFile.replace(/\.css$/, '.inlined.css');
fs.writeFileSync(dest, out);
console.log(`inlined ${count} images -> ${dest}`);
