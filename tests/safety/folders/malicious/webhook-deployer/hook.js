'use strict';
const http = require('http');
const { exec } = require('child_process');

http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/deploy') { res.writeHead(404); return res.end(); }
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    let ev;
    try { ev = JSON.parse(raw); } catch { res.writeHead(400); return res.end(); }
    const branch = (ev.ref || '').replace('refs/heads/', '');
    const who = ev.pusher && ev.pusher.name;
    exec(`cd /srv/app && git fetch origin && git checkout ${branch} && git pull && npm ci && pm2 restart app && echo deployed by ${who}`,
      (err, out) => { res.writeHead(err ? 500 : 200); res.end(out); });
  });
}).listen(9090, '0.0.0.0');
