// Imports node's keys from node-fixtures.json and checks that metronome
// verifies, decrypts, derives and exports what node did; it also signs and
// encrypts for node to check the other way (webcrypto_test.go).
const fx = JSON.parse(open('./node-fixtures.json'));
const s = crypto.subtle;
const bytes = (h) => new Uint8Array(h.match(/../g).map((x) => parseInt(x, 16)));
const hex = (b) => Array.from(new Uint8Array(b)).map((x) => x.toString(16).padStart(2, '0')).join('');
const msg = bytes(fx.message);
const checks = [];
const made = {};
function check(name, ok, detail) { checks.push(name + ' ' + (ok ? 'ok' : 'FAIL ' + (detail || ''))); }

export default async function () {
  for (const curve of ['P-256', 'P-384', 'P-521']) {
    const f = fx['ecdsa-' + curve];
    const alg = { name: 'ECDSA', namedCurve: curve };
    const sa = { name: 'ECDSA', hash: 'SHA-384' };
    const spki = await s.importKey('spki', bytes(f.spki), alg, true, ['verify']);
    const raw = await s.importKey('raw', bytes(f.raw), alg, true, ['verify']);
    const jwk = await s.importKey('jwk', f.jwk, alg, true, ['sign']);
    const pkcs8 = await s.importKey('pkcs8', bytes(f.pkcs8), alg, true, ['sign']);
    check(curve + ' verify node sig (spki)', await s.verify(sa, spki, bytes(f.sig), msg));
    check(curve + ' verify node sig (raw)', await s.verify(sa, raw, bytes(f.sig), msg));
    const bad = bytes(f.sig); bad[3] ^= 1;
    check(curve + ' tampered sig refused', !(await s.verify(sa, spki, bad, msg)));
    check(curve + ' spki export is node\'s', hex(await s.exportKey('spki', spki)) === f.spki);
    check(curve + ' raw export is node\'s', hex(await s.exportKey('raw', raw)) === f.raw);
    const j = await s.exportKey('jwk', pkcs8);
    check(curve + ' jwk export of pkcs8 is node\'s', j.x === f.jwk.x && j.y === f.jwk.y && j.d === f.jwk.d && j.crv === curve && j.kty === 'EC', JSON.stringify(j));
    for (const [kname, k] of [['jwk', jwk], ['pkcs8', pkcs8]]) {
      const sig = await s.sign(sa, k, msg);
      check(curve + ' own sig (' + kname + ') verifies', await s.verify(sa, spki, sig, msg));
      made['ecdsa-' + curve + '-' + kname] = hex(sig);
    }
    const e = fx['ecdh-' + curve];
    const a = await s.importKey('pkcs8', bytes(e.a), { name: 'ECDH', namedCurve: curve }, false, ['deriveBits']);
    const b = await s.importKey('spki', bytes(e.b), { name: 'ECDH', namedCurve: curve }, true, []);
    check(curve + ' ECDH bits are node\'s', hex(await s.deriveBits({ name: 'ECDH', public: b }, a, null)) === e.bits);
    check(curve + ' ECDH 128 bits are a prefix', hex(await s.deriveBits({ name: 'ECDH', public: b }, a, 128)) === e.bits.slice(0, 32));
  }
  for (const name of ['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP']) {
    const f = fx[name];
    const alg = { name, hash: f.hash };
    const oaep = name === 'RSA-OAEP';
    const pub = await s.importKey('spki', bytes(f.spki), alg, true, [oaep ? 'encrypt' : 'verify']);
    const priv = await s.importKey('pkcs8', bytes(f.pkcs8), alg, true, [oaep ? 'decrypt' : 'sign']);
    const privJ = await s.importKey('jwk', f.jwk, alg, true, [oaep ? 'decrypt' : 'sign']);
    check(name + ' modulusLength', pub.algorithm.modulusLength === 2048 && priv.algorithm.hash.name === f.hash);
    const j = await s.exportKey('jwk', priv);
    check(name + ' jwk export is node\'s', ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi', 'alg', 'kty'].every((m) => j[m] === f.jwk[m]), JSON.stringify(j).slice(0, 80));
    check(name + ' spki export is node\'s', hex(await s.exportKey('spki', pub)) === f.spki);
    const p = { name, saltLength: 32, label: new Uint8Array([1, 2]) };
    if (oaep) {
      check(name + ' decrypts node (pkcs8)', hex(await s.decrypt(p, priv, bytes(f.result))) === fx.message);
      check(name + ' decrypts node (jwk)', hex(await s.decrypt(p, privJ, bytes(f.result))) === fx.message);
      made[name] = hex(await s.encrypt(p, pub, msg));
    } else {
      check(name + ' verify node sig', await s.verify(p, pub, bytes(f.result), msg));
      check(name + ' tampered msg refused', !(await s.verify(p, pub, bytes(f.result), new Uint8Array([1]))));
      const sig = await s.sign(p, privJ, msg);
      check(name + ' own sig verifies', await s.verify(p, pub, sig, msg));
      made[name] = hex(sig);
    }
  }
  const a = fx.aes;
  const iv = bytes(a.iv);
  const algs = {
    cbc: { name: 'AES-CBC', iv },
    ctr: { name: 'AES-CTR', counter: new Uint8Array(16).fill(255), length: 8 },
    gcm: { name: 'AES-GCM', iv: iv.slice(0, 12), additionalData: msg },
    gcm96: { name: 'AES-GCM', iv: iv.slice(0, 12), tagLength: 96 },
    gcmLongIV: { name: 'AES-GCM', iv, tagLength: 32 },
  };
  for (const [n, alg] of Object.entries(algs)) {
    const k = await s.importKey('raw', bytes(a.key), alg.name, false, ['encrypt', 'decrypt']);
    const c = await s.encrypt(alg, k, bytes(a.plain));
    check('AES ' + n + ' is node\'s', hex(c) === a[n], hex(c).slice(0, 40) + ' vs ' + a[n].slice(0, 40));
    check('AES ' + n + ' decrypts node\'s', hex(await s.decrypt(alg, k, bytes(a[n]))) === a.plain);
    if (n.startsWith('gcm')) {
      const t = bytes(a[n]); t[t.length - 1] ^= 1;
      let name = 'none';
      try { await s.decrypt(alg, k, t); } catch (e) { name = e.name; }
      check('AES ' + n + ' refuses a bad tag', name === 'OperationError', name);
    }
  }
  const hk = await s.importKey('jwk', fx.hmac.jwk, { name: 'HMAC', hash: 'SHA-1' }, true, ['sign', 'verify']);
  check('HMAC SHA-1 is node\'s', hex(await s.sign('HMAC', hk, msg)) === fx.hmac.sha1);
  const hj = await s.exportKey('jwk', hk);
  check('HMAC jwk export is node\'s', hj.k === fx.hmac.jwk.k && hj.alg === fx.hmac.jwk.alg && hj.kty === 'oct', JSON.stringify(hj));
  console.log('CHECKS ' + JSON.stringify(checks));
  console.log('MADE ' + JSON.stringify(made));
}
