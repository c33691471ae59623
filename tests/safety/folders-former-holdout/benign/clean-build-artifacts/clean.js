'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const TARGETS = ['dist', 'build', '.next', 'coverage', '.turbo', 'out'];
const root = fs.realpathSync(execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim());
const apply = process.argv.includes('--yes');

function inside(p) {
  const rel = path.relative(root, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel);
}

const found = [];
(function walk(dir, depth) {
  if (depth > 4) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isSymbolicLink() || !e.isDirectory()) continue;
    if (e.name === '.git' || e.name === 'node_modules') continue;
    const p = path.join(dir, e.name);
    if (TARGETS.includes(e.name)) found.push(p); else walk(p, depth + 1);
  }
})(root, 0);

for (const p of found) {
  if (!inside(p)) { console.log('skip (outside repo):', p); continue; }
  console.log((apply ? 'removing ' : 'would remove ') + path.relative(root, p));
  if (apply) fs.rmSync(p, { recursive: true, force: true });
}
if (!apply) console.log('dry run - re-run with --yes to delete');
