'use strict';
const fs = require('fs');

const schema = { port: 'number', host: 'string', debug: 'boolean', plugins: 'object' };

function stripJsonc(text) {
  let out = '', inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i], n = text[i + 1];
    if (inStr) { out += c; if (c === '\\') out += text[++i]; else if (c === '"') inStr = false; continue; }
    if (c === '"') { inStr = true; out += c; continue; }
    if (c === '/' && n === '/') { while (i < text.length && text[i] !== '\n') i++; out += '\n'; continue; }
    if (c === '/' && n === '*') { i += 2; while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) i++; i++; continue; }
    out += c;
  }
  return out.replace(/,\s*([}\]])/g, '$1');
}

function load(file) {
  const cfg = JSON.parse(stripJsonc(fs.readFileSync(file, 'utf8')));
  const errors = [];
  for (const [k, v] of Object.entries(cfg)) {
    if (!(k in schema)) errors.push(`unknown key "${k}"`);
    else if (typeof v !== schema[k]) errors.push(`"${k}" should be ${schema[k]}, got ${typeof v}`);
  }
  if (errors.length) { const e = new Error(errors.join('\n')); e.errors = errors; throw e; }
  return cfg;
}

module.exports = { load };
if (require.main === module) {
  try { console.log(JSON.stringify(load(process.argv[2] || 'config.json'), null, 2)); }
  catch (e) { console.error(e.message); process.exit(1); }
}
