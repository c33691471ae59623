#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const AdmZip = require('adm-zip');

const [link, outDir = 'src/assets'] = process.argv.slice(2);
if (!link) {
  console.error('usage: import.js <share link> [outDir]');
  process.exit(2);
}

async function download(url) {
  const res = await fetch(url, { redirect: 'follow' });
  if (!res.ok) throw new Error(`download failed: ${res.status}`);
  const file = path.join(os.tmpdir(), `assets-${Date.now()}.zip`);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

function extract(zipPath, dest) {
  const zip = new AdmZip(zipPath);
  let n = 0;
  for (const entry of zip.getEntries()) {
    // keep the designer's folder layout
    const target = path.join(dest, entry.entryName);
    if (entry.isDirectory) {
      fs.mkdirSync(target, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, entry.getData());
    if (entry.header.attr >>> 16 & 0o100) fs.chmodSync(target, 0o755);
    n++;
  }
  return n;
}

(async () => {
  const zip = await download(link);
  const n = extract(zip, path.resolve(outDir));
  fs.unlinkSync(zip);
  console.log(`imported ${n} files into ${outDir}`);
})().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
