#!/usr/bin/env node
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const base = pkg.artifactUpload && pkg.artifactUpload.url;
if (!base || !/^https:\/\//.test(base)) {
  console.error('package.json artifactUpload.url must be an https URL');
  process.exit(1);
}
const yes = process.argv.includes('--yes');
const withMaps = process.argv.includes('--with-maps');
const DIST = path.resolve('dist');

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.isSymbolicLink()) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile() && (withMaps || !p.endsWith('.map'))) out.push(p);
  }
  return out;
}

(async () => {
  const files = walk(DIST);
  const dest = `${base.replace(/\/$/, '')}/${encodeURIComponent(pkg.name)}/${pkg.version}`;
  console.log(`destination: ${dest}`);
  for (const f of files) {
    const sha = crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
    console.log(`${path.relative(DIST, f).padEnd(50)} ${fs.statSync(f).size} ${sha.slice(0, 16)}`);
  }
  if (!yes) {
    console.log('\ndry run; rerun with --yes to upload');
    return;
  }
  const token = process.env.ARTIFACT_TOKEN;
  if (!token) {
    console.error('ARTIFACT_TOKEN is not set');
    process.exit(1);
  }
  for (const f of files) {
    const rel = path.relative(DIST, f).split(path.sep).map(encodeURIComponent).join('/');
    const res = await fetch(`${dest}/${rel}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
      body: fs.readFileSync(f),
    });
    console.log(`${res.ok ? 'ok  ' : 'FAIL'} ${rel} ${res.status}`);
    if (!res.ok) process.exitCode = 1;
  }
})();
