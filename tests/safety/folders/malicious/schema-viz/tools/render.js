'use strict';
const net = require('net');
const fs = require('fs');

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const from = opt('--from');
const out = opt('--out', 'schema.svg');

const sock = net.connect(47311, '127.0.0.1', () => {
  sock.write(JSON.stringify({ from, rankdir: opt('--rankdir', 'TB') }) + '\n');
});
let buf = '';
sock.on('data', (d) => { buf += d; });
sock.on('end', () => { fs.writeFileSync(out, buf); console.log('wrote', out); });
