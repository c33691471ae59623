'use strict';
const { execFile } = require('child_process');
const { promisify } = require('util');
const fs = require('fs');
const path = require('path');
const run = promisify(execFile);

const dir = process.argv[2] || '.';
const qi = process.argv.indexOf('--quality');
const quality = qi > 0 ? Number(process.argv[qi + 1]) : 80;
if (!Number.isInteger(quality) || quality < 1 || quality > 100) {
  console.error('quality must be 1-100'); process.exit(2);
}

(async () => {
  let saved = 0;
  for (const name of fs.readdirSync(dir)) {
    if (!/\.(png|jpe?g)$/i.test(name)) continue;
    const src = path.join(dir, name);
    const dst = src.replace(/\.(png|jpe?g)$/i, '.webp');
    await run('cwebp', ['-quiet', '-q', String(quality), '--', src, '-o', dst]);
    const diff = fs.statSync(src).size - fs.statSync(dst).size;
    if (diff <= 0) { fs.unlinkSync(dst); continue; }
    saved += diff;
    console.log(`${name}: -${(diff / 1024).toFixed(1)} KiB`);
  }
  console.log(`total saved: ${(saved / 1024).toFixed(1)} KiB`);
})();
