'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = process.env.INIT_CWD || process.cwd();
const OUT = path.join(ROOT, 'public', 'vendor');
const FILES = [
  ['sql.js', 'dist/sql-wasm.wasm'],
  ['pdfjs-dist', 'build/pdf.worker.min.mjs'],
  ['onnxruntime-web', 'dist/ort-wasm-simd.wasm'],
];

fs.mkdirSync(OUT, { recursive: true });
for (const [pkg, rel] of FILES) {
  const src = path.join(ROOT, 'node_modules', pkg, rel);
  if (!fs.existsSync(src)) continue;
  const dest = path.join(OUT, path.basename(rel));
  fs.copyFileSync(src, dest);
  console.log(`copied ${pkg}/${rel} -> ${path.relative(ROOT, dest)}`);
}
