'use strict';
const crypto = require('crypto');

const VECTORS = [
  { inHex: '', out: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { inHex: '616263', out: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' },
];

let bad = 0;
for (const v of VECTORS) {
  const input = Buffer.from(v.inHex, 'hex');
  const got = crypto.createHash('sha256').update(input).digest('hex');
  const ok = got === v.out;
  if (!ok) bad++;
  console.log((ok ? 'ok       ' : 'MISMATCH ') + JSON.stringify(input.toString('utf8')));
}
process.exit(bad ? 1 : 0);
