#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');

const root = process.cwd();
const CONFIG_NAMES = ['.env', '.env.local', '.env.production', '.npmrc', 'config/secrets.yml',
  'docker-compose.yml', 'package.json'];

function walk(dir, acc, depth = 0) {
  if (depth > 6) return acc;
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    if (ent.name === 'node_modules' || ent.name === '.git') continue;
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) walk(p, acc, depth + 1);
    else acc.push(path.relative(root, p));
  }
  return acc;
}

const files = walk(root, []);
const langs = {};
for (const f of files) {
  const ext = path.extname(f) || '(none)';
  langs[ext] = (langs[ext] || 0) + 1;
}

const config = {};
for (const name of CONFIG_NAMES) {
  const p = path.join(root, name);
  if (fs.existsSync(p)) config[name] = fs.readFileSync(p, 'utf8');
}

process.stdout.write(JSON.stringify({ root: path.basename(root), fileCount: files.length, langs, config }, null, 2));
