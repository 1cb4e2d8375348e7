// Makes node-fixtures.json with node's WebCrypto, an implementation
// independent of metronome's: keys in every format, and what node signed,
// encrypted and derived with them. webcrypto_test.go imports the keys and
// checks metronome verifies, decrypts and derives the same.
//   node testdata/node-fixtures.js > testdata/node-fixtures.json
const { subtle } = globalThis.crypto;
const hex = (b) => Buffer.from(b).toString('hex');
const msg = new TextEncoder().encode('metronome and node agree');
(async () => {
  const out = { message: hex(msg) };
  const ex = async (fmt, k) => (fmt === 'jwk' ? await subtle.exportKey('jwk', k) : hex(await subtle.exportKey(fmt, k)));
  for (const curve of ['P-256', 'P-384', 'P-521']) {
    const k = await subtle.generateKey({ name: 'ECDSA', namedCurve: curve }, true, ['sign', 'verify']);
    const sig = await subtle.sign({ name: 'ECDSA', hash: 'SHA-384' }, k.privateKey, msg);
    out['ecdsa-' + curve] = { spki: await ex('spki', k.publicKey), raw: await ex('raw', k.publicKey), jwk: await ex('jwk', k.privateKey), pkcs8: await ex('pkcs8', k.privateKey), sig: hex(sig) };
    const a = await subtle.generateKey({ name: 'ECDH', namedCurve: curve }, true, ['deriveBits']);
    const b = await subtle.generateKey({ name: 'ECDH', namedCurve: curve }, true, ['deriveBits']);
    const bits = await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, null);
    out['ecdh-' + curve] = { a: await ex('pkcs8', a.privateKey), b: await ex('spki', b.publicKey), bits: hex(bits) };
  }
  for (const [name, hash] of [['RSASSA-PKCS1-v1_5', 'SHA-256'], ['RSA-PSS', 'SHA-512'], ['RSA-OAEP', 'SHA-256']]) {
    const usages = name === 'RSA-OAEP' ? ['encrypt', 'decrypt'] : ['sign', 'verify'];
    const k = await subtle.generateKey({ name, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash }, true, usages);
    let result;
    if (name === 'RSA-OAEP') result = await subtle.encrypt({ name, label: new Uint8Array([1, 2]) }, k.publicKey, msg);
    else result = await subtle.sign({ name, saltLength: 32 }, k.privateKey, msg);
    out[name] = { hash, spki: await ex('spki', k.publicKey), pkcs8: await ex('pkcs8', k.privateKey), jwk: await ex('jwk', k.privateKey), result: hex(result) };
  }
  const aesKey = new Uint8Array(32).map((_, i) => i);
  const iv = new Uint8Array(16).map((_, i) => 100 + i);
  const long = new Uint8Array(100).map((_, i) => i * 7);
  const aes = async (alg) => hex(await subtle.encrypt(alg, await subtle.importKey('raw', aesKey, alg.name, false, ['encrypt']), long));
  out.aes = {
    key: hex(aesKey), iv: hex(iv), plain: hex(long),
    cbc: await aes({ name: 'AES-CBC', iv }),
    ctr: await aes({ name: 'AES-CTR', counter: new Uint8Array(16).fill(255), length: 8 }),
    gcm: await aes({ name: 'AES-GCM', iv: iv.slice(0, 12), additionalData: msg }),
    gcm96: await aes({ name: 'AES-GCM', iv: iv.slice(0, 12), tagLength: 96 }),
    gcmLongIV: await aes({ name: 'AES-GCM', iv, tagLength: 32 }),
  };
  const hk = await subtle.importKey('raw', aesKey, { name: 'HMAC', hash: 'SHA-1' }, true, ['sign']);
  out.hmac = { sha1: hex(await subtle.sign('HMAC', hk, msg)), jwk: await subtle.exportKey('jwk', hk) };
  console.log(JSON.stringify(out, null, 1));
})();
