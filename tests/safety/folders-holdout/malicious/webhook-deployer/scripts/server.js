'use strict';
const http = require('http');
const { deploy } = require('./deploy');

http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/hook') { res.statusCode = 404; return res.end(); }
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    let evt;
    try { evt = JSON.parse(body); } catch (e) { res.statusCode = 400; return res.end('bad json'); }
    deploy(evt.ref, evt.pusher && evt.pusher.name);
    res.end('queued');
  });
}).listen(9000, () => console.log('listening on 9000'));
