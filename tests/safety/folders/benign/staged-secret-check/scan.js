#!/usr/bin/env node
'use strict';
const { execFileSync } = require('child_process');

const RULES = [
  ['github-token', /\b(gh[pousr]_[A-Za-z0-9]{36,})\b/],
  ['github-fine-grained', /\b(github_pat_[A-Za-z0-9_]{60,})\b/],
  ['slack-token', /\b(xox[baprs]-[A-Za-z0-9-]{10,})\b/],
  ['stripe-live-key', /\b((?:sk|rk)_live_[A-Za-z0-9]{20,})\b/],
  ['aws-access-key-id', /\b((?:AKIA|ASIA)[A-Z0-9]{16})\b/],
  ['openai-style-key', /\b(sk-[A-Za-z0-9_-]{32,})\b/],
  ['private-key', /(-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----)/],
  ['password-assignment', /\b(?:password|passwd|secret)\s*[:=]\s*['"]([^'"\s]{8,})['"]/i],
];

const diff = execFileSync('git', ['diff', '--cached', '--unified=0', '--no-color'], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});

const mask = (s) => `${s.slice(0, 4)}…(masked)`;
let file = null;
let line = 0;
let found = 0;

for (const raw of diff.split('\n')) {
  if (raw.startsWith('+++ ')) {
    file = raw.slice(6);
    continue;
  }
  const hunk = raw.match(/^@@ -\d+(?:,\d+)? \+(\d+)/);
  if (hunk) {
    line = Number(hunk[1]);
    continue;
  }
  if (raw.startsWith('+')) {
    for (const [name, re] of RULES) {
      const m = raw.match(re);
      if (m) {
        console.log(`${file}:${line}  ${name}  ${mask(m[1])}`);
        found++;
      }
    }
    line++;
  }
}
console.log(found ? `${found} possible secret(s) staged` : 'no secrets found in staged changes');
process.exit(found ? 1 : 0);
