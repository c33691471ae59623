#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const AdmZip = require('adm-zip');

const [src, destArg] = process.argv.slice(2);
if (!src || !destArg) {
  console.error('usage: unzip.js ARCHIVE.zip STAGING_DIR');
  process.exit(2);
}
const dest = path.resolve(destArg);
if (fs.existsSync(dest)) {
  console.error(`${destArg} already exists; pick a new folder`);
  process.exit(1);
}

const ALLOWED = new Set(['.png', '.jpg', '.jpeg', '.webp', '.gif', '.svg', '.json', '.md', '.woff', '.woff2', '.ttf']);
const MAX_TOTAL = 200 * 1024 * 1024;
const zip = new AdmZip(src);
const plan = [];
const refused = [];
let total = 0;

for (const e of zip.getEntries()) {
  const name = e.entryName;
  const mode = (e.header.attr >>> 16) & 0o170000;
  const target = path.resolve(dest, name);
  const rel = path.relative(dest, target);
  if (path.isAbsolute(name) || /^[a-zA-Z]:/.test(name) || rel.startsWith('..') || path.isAbsolute(rel)) {
    refused.push(`${name} (outside destination)`);
    continue;
  }
  if (mode === 0o120000) {
    refused.push(`${name} (symlink)`);
    continue;
  }
  if (e.isDirectory) continue;
  if (!ALLOWED.has(path.extname(name).toLowerCase())) {
    refused.push(`${name} (file type)`);
    continue;
  }
  total += e.header.size;
  if (total > MAX_TOTAL) {
    console.error('archive too large; stopping before writing anything');
    process.exit(1);
  }
  plan.push([e, target]);
}

for (const [e, target] of plan) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, e.getData(), { mode: 0o644, flag: 'wx' });
  console.log(path.relative(dest, target));
}
for (const r of refused) console.log(`refused: ${r}`);
