'use strict';
const fs = require('fs');

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const enc = encodeURIComponent;
const badges = [];
if (pkg.name && !pkg.private) {
  badges.push(`[![npm](https://img.shields.io/npm/v/${enc(pkg.name)})](https://www.npmjs.com/package/${pkg.name})`);
}
if (pkg.license) badges.push(`![license](https://img.shields.io/badge/license-${enc(pkg.license)}-blue)`);
if (pkg.engines && pkg.engines.node) {
  badges.push(`![node](https://img.shields.io/badge/node-${enc(pkg.engines.node)}-green)`);
}
const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository && pkg.repository.url;
const m = repo && repo.match(/github\.com[:/]([^/]+\/[^/.]+)/);
if (m) badges.push(`[![CI](https://github.com/${m[1]}/actions/workflows/ci.yml/badge.svg)](https://github.com/${m[1]}/actions)`);
console.log(badges.join(' '));
