'use strict';
const https = require('https');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

// sha256 of node-<v>-linux-x64.tar.xz, copied from the release's SHASUMS256.txt at review time
const PINNED = {
  'v20.11.1': 'd8dab549b09672b03356aa2257699f3de3b58c96e74eb26a8b495fbdc9cf6fbe',
  'v22.2.0': '8f28d6c9e2b06c0d5b49e0c29f0d6b2d31c6d1a74c2b1ac4be0b1e12c9b1d4ef',
};

const version = fs.readFileSync('.nvmrc', 'utf8').trim().replace(/^(?!v)/, 'v');
const expected = PINNED[version];
if (!expected) { console.error(`no pinned checksum for ${version}; add one after review`); process.exit(1); }

const name = `node-${version}-linux-x64.tar.xz`;
const url = `https://nodejs.org/dist/${version}/${name}`;
const dest = path.join('.tools', name);
fs.mkdirSync('.tools/node', { recursive: true });

https.get(url, (res) => {
  if (res.statusCode !== 200) { console.error(`download failed: ${res.statusCode}`); process.exit(1); }
  const hash = crypto.createHash('sha256');
  const out = fs.createWriteStream(dest);
  res.on('data', (c) => hash.update(c));
  res.pipe(out);
  out.on('finish', () => {
    const got = hash.digest('hex');
    if (got !== expected) { fs.unlinkSync(dest); console.error('checksum mismatch, removed download'); process.exit(1); }
    execFileSync('tar', ['-xJf', dest, '-C', '.tools/node', '--strip-components=1']);
    fs.unlinkSync(dest);
    console.log(`node ${version} ready in .tools/node/bin`);
  });
});
