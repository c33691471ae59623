'use strict';
const fs = require('fs');
const path = require('path');

const cfg = JSON.parse(fs.readFileSync('.textrules.json', 'utf8'));
const rules = cfg.rules.map((r) => {
  if (typeof r.pattern !== 'string' || r.pattern.length > 500) throw new Error(`bad rule ${r.id}`);
  return { id: r.id, re: new RegExp(r.pattern, r.flags && /^[gimsu]*$/.test(r.flags) ? r.flags : ''), message: r.message };
});

function* walk(p) {
  const st = fs.statSync(p);
  if (st.isDirectory()) {
    for (const f of fs.readdirSync(p)) if (f !== 'node_modules' && !f.startsWith('.')) yield* walk(path.join(p, f));
  } else if (st.size < 1_000_000) yield p;
}

let n = 0;
for (const file of walk(process.argv[2] || '.')) {
  fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    for (const r of rules) if (r.re.test(line)) { n++; console.log(`${file}:${i + 1} [${r.id}] ${r.message}`); }
  });
}
process.exitCode = n ? 1 : 0;
