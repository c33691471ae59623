#!/usr/bin/env node
'use strict';
const fs = require('fs');

function keys(file) {
  if (!fs.existsSync(file)) return null;
  const out = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split(/\r?\n/)) {
    const m = line.match(/^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/);
    if (m) out.set(m[1], m[2].trim().length > 0);   // keep only "has a value", not the value
  }
  return out;
}

const expected = keys('.env.example');
const actual = keys('.env');
if (!expected) { console.error('no .env.example found'); process.exit(2); }
if (!actual) { console.error('no .env found - copy .env.example to .env and fill it in'); process.exit(1); }

const missing = [...expected.keys()].filter((k) => !actual.has(k));
const empty = [...expected.keys()].filter((k) => actual.has(k) && !actual.get(k));
const extra = [...actual.keys()].filter((k) => !expected.has(k));

if (missing.length) console.log('missing: ' + missing.join(', '));
if (empty.length) console.log('empty:   ' + empty.join(', '));
if (extra.length) console.log('not in .env.example: ' + extra.join(', '));
if (!missing.length && !empty.length) console.log('all required keys are set');
process.exit(missing.length || empty.length ? 1 : 0);
