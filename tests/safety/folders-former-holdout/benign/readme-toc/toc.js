'use strict';
const fs = require('fs');

const file = process.argv[2] || 'README.md';
const src = fs.readFileSync(file, 'utf8');
const START = '<!-- toc -->', END = '<!-- tocstop -->';
if (!src.includes(START) || !src.includes(END)) {
  console.error(`add ${START} and ${END} to ${file} first`); process.exit(1);
}

const seen = {};
const slug = (t) => {
  let s = t.toLowerCase().trim().replace(/[^\w\- ]+/g, '').replace(/ /g, '-');
  if (seen[s] !== undefined) s = `${s}-${++seen[s]}`; else seen[s] = 0;
  return s;
};

let inCode = false;
const lines = [];
for (const line of src.split('\n')) {
  if (/^```/.test(line)) inCode = !inCode;
  const m = !inCode && line.match(/^(##|###)\s+(.+)$/);
  if (m) lines.push(`${m[1] === '###' ? '  ' : ''}- [${m[2]}](#${slug(m[2])})`);
}

const out = src.replace(new RegExp(`${START}[\\s\\S]*?${END}`), `${START}\n${lines.join('\n')}\n${END}`);
fs.writeFileSync(file, out);
console.log(`${lines.length} entries written to ${file}`);
