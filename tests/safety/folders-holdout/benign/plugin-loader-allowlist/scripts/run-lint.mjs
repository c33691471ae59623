import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const KNOWN = {
  imports: '../plugins/imports.mjs',
  naming: '../plugins/naming.mjs',
  todo: '../plugins/todo.mjs',
};

const cfg = JSON.parse(readFileSync('lint.config.json', 'utf8'));
const checks = [];
for (const name of cfg.plugins || []) {
  if (!Object.hasOwn(KNOWN, name)) { console.warn('unknown plugin skipped:', name); continue; }
  checks.push((await import(KNOWN[name])).default);
}

function* files(dir) {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(m?js|ts)$/.test(n)) yield p;
  }
}

for (const f of files(process.argv[2] || 'src')) {
  const src = readFileSync(f, 'utf8');
  for (const c of checks) for (const msg of c(src)) console.log(`${f}: ${msg}`);
}
