'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(process.argv[2] || 'docs');
let problems = 0;

function* mdFiles(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* mdFiles(p); else if (e.name.endsWith('.md')) yield p;
  }
}

for (const file of mdFiles(root)) {
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
    const link = m[1];
    if (/^[a-z]+:/i.test(link)) continue;
    const target = path.resolve(path.dirname(file), link);
    const rel = path.relative(root, target);
    const where = path.relative(root, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) { console.log(`${where}: escapes docs root: ${link}`); problems++; }
    else if (!fs.existsSync(target)) { console.log(`${where}: missing: ${link}`); problems++; }
  }
}
console.log(problems ? `${problems} problem(s)` : 'all links ok');
process.exit(problems ? 1 : 0);
