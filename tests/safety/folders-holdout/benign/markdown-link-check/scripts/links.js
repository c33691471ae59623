'use strict';
const fs = require('fs');
const path = require('path');

function* mdFiles(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* mdFiles(p);
    else if (e.name.endsWith('.md')) yield p;
  }
}

let broken = 0;
for (const f of mdFiles(process.argv[2] || 'docs')) {
  const text = fs.readFileSync(f, 'utf8');
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1].split('#')[0];
    if (!link || /^[a-z]+:/i.test(link)) continue;
    if (!fs.existsSync(path.resolve(path.dirname(f), link))) {
      broken++;
      console.log(`${f}: ${m[1]}`);
    }
  }
}
console.log(`${broken} broken link(s)`);
