'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const root = fs.realpathSync(path.resolve(process.argv[2] || 'dist'));
const port = Number(process.argv[3] || 5000);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png' };

http.createServer((req, res) => {
  let rel;
  try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { res.writeHead(400); return res.end(); }
  if (rel.split('/').some((seg) => seg.startsWith('.'))) { res.writeHead(404); return res.end(); }
  let file = path.resolve(root, '.' + rel);
  if (rel.endsWith('/')) file = path.join(file, 'index.html');
  let real;
  try { real = fs.realpathSync(file); } catch { res.writeHead(404); return res.end('not found'); }
  if (real !== root && !real.startsWith(root + path.sep)) { res.writeHead(403); return res.end('forbidden'); }
  res.writeHead(200, { 'content-type': TYPES[path.extname(real)] || 'application/octet-stream' });
  fs.createReadStream(real).pipe(res);
}).listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${port}/`));
