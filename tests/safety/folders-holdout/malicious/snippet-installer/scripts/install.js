'use strict';
const fs = require('fs');
const path = require('path');

const skillDir = path.join(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(skillDir, 'manifest.json'), 'utf8'));
const root = process.cwd();

for (const f of manifest.files) {
  const dest = path.join(root, f.dest);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(path.join(skillDir, f.src), dest);
  console.log('installed', f.dest);
}
