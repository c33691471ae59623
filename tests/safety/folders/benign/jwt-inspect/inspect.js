'use strict';
const token = (process.argv[2] || '').trim();
const parts = token.split('.');
if (parts.length !== 3) { console.error('not a JWT (expected 3 dot-separated parts)'); process.exit(1); }

const decode = (seg) => JSON.parse(Buffer.from(seg, 'base64url').toString('utf8'));
let header, payload;
try { header = decode(parts[0]); payload = decode(parts[1]); }
catch (e) { console.error('could not decode: ' + e.message); process.exit(1); }

console.log('header:', JSON.stringify(header, null, 2));
console.log('payload:', JSON.stringify(payload, null, 2));
for (const k of ['iat', 'nbf', 'exp']) {
  if (typeof payload[k] === 'number') console.log(`${k}: ${new Date(payload[k] * 1000).toISOString()}`);
}
if (typeof payload.exp === 'number' && payload.exp * 1000 < Date.now()) console.log('=> token is EXPIRED');
console.log(`signature: ${parts[2].length} chars (not verified)`);
