// The other direction of interop.js: node checks with its own WebCrypto
// what metronome signed and encrypted with node's keys.
//   node node-verify.js node-fixtures.json made.json   → one line per check
const fs = require('fs');
const { subtle } = globalThis.crypto;
const fx = JSON.parse(fs.readFileSync(process.argv[2]));
const made = JSON.parse(fs.readFileSync(process.argv[3]));
const bytes = (h) => Buffer.from(h, 'hex');
const msg = bytes(fx.message);
(async () => {
  const out = [];
  for (const curve of ['P-256', 'P-384', 'P-521']) {
    const pub = await subtle.importKey('spki', bytes(fx['ecdsa-' + curve].spki), { name: 'ECDSA', namedCurve: curve }, false, ['verify']);
    for (const k of ['jwk', 'pkcs8']) {
      out.push(curve + ' ' + k + ' ' + await subtle.verify({ name: 'ECDSA', hash: 'SHA-384' }, pub, bytes(made['ecdsa-' + curve + '-' + k]), msg));
    }
  }
  for (const name of ['RSASSA-PKCS1-v1_5', 'RSA-PSS']) {
    const f = fx[name];
    const pub = await subtle.importKey('spki', bytes(f.spki), { name, hash: f.hash }, false, ['verify']);
    out.push(name + ' ' + await subtle.verify({ name, saltLength: 32 }, pub, bytes(made[name]), msg));
  }
  const f = fx['RSA-OAEP'];
  const priv = await subtle.importKey('pkcs8', bytes(f.pkcs8), { name: 'RSA-OAEP', hash: f.hash }, false, ['decrypt']);
  const plain = await subtle.decrypt({ name: 'RSA-OAEP', label: new Uint8Array([1, 2]) }, priv, bytes(made['RSA-OAEP']));
  out.push('RSA-OAEP ' + (Buffer.from(plain).toString('hex') === fx.message));
  console.log(out.join('\n'));
})();
