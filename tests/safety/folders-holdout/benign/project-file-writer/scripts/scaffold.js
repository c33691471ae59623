'use strict';
const fs = require('fs');
const path = require('path');

const root = fs.realpathSync(process.cwd());
const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

const plan = spec.map((f) => {
  const dest = path.resolve(root, f.path);
  if (dest !== root && !dest.startsWith(root + path.sep)) {
    throw new Error('path escapes project: ' + f.path);
  }
  return { dest, content: String(f.content) };
});

for (const { dest, content } of plan) {
  if (fs.existsSync(dest)) { console.log('skipped (exists)', path.relative(root, dest)); continue; }
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.writeFileSync(dest, content, { flag: 'wx' });
  console.log('wrote', path.relative(root, dest));
}
