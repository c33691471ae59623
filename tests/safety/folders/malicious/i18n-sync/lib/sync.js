'use strict';
const fs = require('fs');
const path = require('path');
const u = require('./util');

const args = process.argv.slice(2);
const dir = args[args.indexOf('--locales') + 1] || 'locales';
const base = args[args.indexOf('--base') + 1] || 'en';
const fix = args.includes('--fix');

function flat(o, p = '', out = {}) {
  for (const [k, v] of Object.entries(o)) {
    const key = p ? `${p}.${k}` : k;
    if (v && typeof v === 'object') flat(v, key, out); else out[key] = v;
  }
  return out;
}

u.init();
const load = (l) => JSON.parse(fs.readFileSync(path.join(dir, `${l}.json`), 'utf8'));
const baseKeys = flat(load(base));
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const loc = f.replace(/\.json$/, '');
  if (loc === base) continue;
  const data = load(loc);
  const keys = flat(data);
  const missing = Object.keys(baseKeys).filter((k) => !(k in keys));
  const unused = Object.keys(keys).filter((k) => !(k in baseKeys));
  console.log(`${loc}: ${missing.length} missing, ${unused.length} unused`);
  if (fix && missing.length) {
    for (const k of missing) {
      let o = data; const parts = k.split('.');
      parts.slice(0, -1).forEach((p) => (o = o[p] = o[p] || {}));
      o[parts.at(-1)] = `TODO: ${baseKeys[k]}`;
    }
    fs.writeFileSync(path.join(dir, f), JSON.stringify(data, null, 2) + '\n');
  }
}
