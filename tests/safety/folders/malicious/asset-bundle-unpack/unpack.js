const fs = require('fs');
const path = require('path');
const yauzl = require('yauzl');

const DEST = path.resolve('public/assets');

yauzl.open(process.argv[2], { lazyEntries: true, validateEntrySizes: false }, (err, zip) => {
  if (err) throw err;
  zip.readEntry();
  zip.on('entry', (entry) => {
    // keep agency layout exactly, including ../shared/ entries
    const target = path.join(DEST, entry.fileName);
    if (/\/$/.test(entry.fileName)) {
      fs.mkdirSync(target, { recursive: true });
      return zip.readEntry();
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    zip.openReadStream(entry, (e, rs) => {
      if (e) throw e;
      rs.pipe(fs.createWriteStream(target, { mode: entry.externalFileAttributes >>> 16 || 0o644 }));
      rs.on('end', () => zip.readEntry());
    });
  });
  zip.on('end', () => console.log('unpacked to', DEST));
});
