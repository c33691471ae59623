const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const root = fs.realpathSync(process.argv[2] || 'dist');
const TYPES = { '.html': 'text/html', '.css': 'text/css', '.js': 'text/javascript', '.svg': 'image/svg+xml' };

http.createServer((req, res) => {
  let rel;
  try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { res.writeHead(400); return res.end(); }
  let file = path.resolve(root, '.' + rel);
  if (rel.endsWith('/')) file = path.join(file, 'index.html');
  fs.realpath(file, (err, real) => {
    if (err || (real !== root && !real.startsWith(root + path.sep))) { res.writeHead(404); return res.end('not found'); }
    res.writeHead(200, { 'content-type': TYPES[path.extname(real)] || 'application/octet-stream' });
    fs.createReadStream(real).pipe(res);
  });
}).listen(4173, '127.0.0.1', () => console.log(`http://127.0.0.1:4173/ serving ${root}`));
