// The WebCrypto probe: run through k6 v2.2.0 with
//   k6 run -q --summary-mode=disabled --log-format=json k6webcrypto.js
// and recorded in k6webcrypto.k6.json; webcrypto_test.go runs it in
// metronome. Keys are described by their standard members only, errors by
// name (the messages are each runtime's own).
export const options = { iterations: 1, vus: 1 };
const te = (s) => new Uint8Array(Array.from(s).map((c) => c.charCodeAt(0)));
const out = [];
function ab(v) { return Array.from(new Uint8Array(v)).map((x) => x.toString(16).padStart(2, '0')).join(''); }
function desc(k) { const a = k.algorithm; return JSON.stringify({ type: k.type, extractable: k.extractable, usages: k.usages, name: a.name, length: a.length, hash: a.hash && a.hash.name, namedCurve: a.namedCurve, modulusLength: a.modulusLength }); }
async function t(name, f) { try { const v = await f(); out.push(name + ' => ' + (v instanceof ArrayBuffer ? 'AB:' + ab(v) : typeof v === 'object' && v && v.type ? desc(v) : JSON.stringify(v))); } catch (e) { out.push(name + ' !! ' + (e && e.name)); } }
export default async function () {
  out.push('typeof crypto ' + typeof crypto + ' ' + ['getRandomValues', 'randomUUID', 'subtle'].map((n) => typeof crypto[n]).join(',') + ' subtle:' + Object.keys(crypto.subtle).sort().map((n) => n + ':' + typeof crypto.subtle[n]).join(','));
    const u = crypto.randomUUID(); out.push('uuid ' + /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u));
  const a = new Uint8Array(8); const r = crypto.getRandomValues(a); out.push('grv same ' + (r === a) + ' ' + a.length);
  await t('grv too big', () => crypto.getRandomValues(new Uint8Array(65537)));
  await t('grv float', () => crypto.getRandomValues(new Float32Array(2)));
  await t('grv u32', () => crypto.getRandomValues(new Uint32Array(2)).length);
  await t('grv AB', () => crypto.getRandomValues(new ArrayBuffer(2)));
  await t('digest', () => crypto.subtle.digest('SHA-256', te('abc')));
  await t('digest obj', () => crypto.subtle.digest({ name: 'SHA-1' }, new Uint8Array([97, 98, 99])));
  await t('digest str', () => crypto.subtle.digest('SHA-256', 'abc'));
  await t('digest md5', () => crypto.subtle.digest('MD5', new Uint8Array([1])));
  await t('digest sha-384 lower', () => crypto.subtle.digest('sha-384', new Uint8Array([1])));
  await t('digest ret', () => { const p = crypto.subtle.digest('SHA-256', new Uint8Array([1])); return String(p instanceof Promise); });
  await t('aes gen', () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']));
  await t('aes gen bad len', () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 100 }, true, ['encrypt', 'decrypt']));
  await t('aes gen bad usage', () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['sign']));
  await t('aes gen no usage', () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, []));
  await t('hmac gen', () => crypto.subtle.generateKey({ name: 'HMAC', hash: { name: 'SHA-256' } }, true, ['sign', 'verify']));
  await t('hmac gen str hash', () => crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-512', length: 128 }, false, ['sign']));
  await t('ecdsa gen', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']); return desc(k.publicKey) + ' ' + desc(k.privateKey); });
  await t('ecdh gen', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-384' }, true, ['deriveBits']); return desc(k.publicKey) + ' ' + desc(k.privateKey); });
  await t('ecdh gen 521', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-521' }, true, ['deriveBits']); return k.publicKey.algorithm; });
  await t('rsa gen', async () => { const k = await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']); return desc(k.publicKey) + ' ' + desc(k.privateKey); });
  await t('rsa-oaep gen', async () => { const k = await crypto.subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-1' }, true, ['encrypt', 'decrypt']); return desc(k.publicKey) + ' ' + desc(k.privateKey); });
  await t('unknown alg', () => crypto.subtle.generateKey({ name: 'FOO' }, true, ['sign']));
  await t('ed25519 gen', () => crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']));
  await t('x25519 gen', () => crypto.subtle.generateKey({ name: 'X25519' }, true, ['deriveBits']));
  const raw = new Uint8Array(16).fill(7);
  await t('import aes raw', () => crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, true, ['encrypt', 'decrypt']));
  await t('import aes raw str alg', () => crypto.subtle.importKey('raw', raw, 'AES-CTR', false, ['encrypt']));
  await t('import aes bad len', () => crypto.subtle.importKey('raw', new Uint8Array(15), { name: 'AES-CBC' }, true, ['encrypt']));
  await t('import hmac raw', () => crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']));
  await t('import hmac empty', () => crypto.subtle.importKey('raw', new Uint8Array(0), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']));
  await t('export aes jwk', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, true, ['encrypt', 'decrypt']); return crypto.subtle.exportKey('jwk', k); });
  await t('export hmac jwk', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-384' }, true, ['sign', 'verify']); return crypto.subtle.exportKey('jwk', k); });
  await t('export hmac raw', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-384' }, true, ['sign', 'verify']); return crypto.subtle.exportKey('raw', k); });
  await t('export nonextractable', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt']); return crypto.subtle.exportKey('raw', k); });
  await t('export bad format', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, true, ['encrypt']); return crypto.subtle.exportKey('spki', k); });
  await t('hmac sign', async () => { const k = await crypto.subtle.importKey('raw', te('key'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']); return crypto.subtle.sign('HMAC', k, te('The quick brown fox jumps over the lazy dog')); });
  await t('hmac sign wrong usage', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']); return crypto.subtle.sign('HMAC', k, raw); });
  await t('hmac verify', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']); const s = await crypto.subtle.sign('HMAC', k, raw); return [await crypto.subtle.verify('HMAC', k, s, raw), await crypto.subtle.verify('HMAC', k, s, new Uint8Array(3))]; });
  await t('aes-cbc enc', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, false, ['encrypt']); return crypto.subtle.encrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, k, new Uint8Array([1, 2, 3])); });
  await t('aes-cbc bad iv', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, false, ['encrypt']); return crypto.subtle.encrypt({ name: 'AES-CBC', iv: new Uint8Array(8) }, k, new Uint8Array([1, 2, 3])); });
  await t('aes-cbc wrong alg', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, false, ['encrypt']); return crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array([1, 2, 3])); });
  await t('aes-cbc bad dec', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, false, ['decrypt']); return crypto.subtle.decrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, k, new Uint8Array(16)); });
  await t('aes-ctr enc', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-CTR' }, false, ['encrypt']); return crypto.subtle.encrypt({ name: 'AES-CTR', counter: new Uint8Array(16), length: 64 }, k, new Uint8Array([1, 2, 3])); });
  await t('aes-gcm enc', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt']); return crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), additionalData: new Uint8Array([9]), tagLength: 96 }, k, new Uint8Array([1, 2, 3])); });
  await t('aes-gcm bad dec', async () => { const k = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['decrypt']); return crypto.subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(20)); });
  await t('derive ecdh', async () => { const a = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const b = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const x = await crypto.subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 256); const y = await crypto.subtle.deriveBits({ name: 'ECDH', public: a.publicKey }, b.privateKey, 256); return [ab(x) === ab(y), x.byteLength]; });
  await t('derive ecdh 128', async () => { const a = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const b = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const x = await crypto.subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 128); return x.byteLength; });
  await t('derive ecdh null', async () => { const a = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const b = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const x = await crypto.subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey); return x.byteLength; });
  await t('derive ecdh 512', async () => { const a = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const b = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const x = await crypto.subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 512); return x.byteLength; });
  await t('deriveKey', () => typeof crypto.subtle.deriveKey + typeof crypto.subtle.wrapKey);
  await t('ec export raw', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']); const r = await crypto.subtle.exportKey('raw', k.publicKey); const j = await crypto.subtle.exportKey('jwk', k.privateKey); const s = await crypto.subtle.exportKey('spki', k.publicKey); const p = await crypto.subtle.exportKey('pkcs8', k.privateKey); return [r.byteLength, Object.keys(j).sort().join(','), j.kty, j.crv, j.key_ops, j.ext, s.byteLength, p.byteLength]; });
  await t('ec export raw priv', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']); return crypto.subtle.exportKey('raw', k.privateKey); });
  await t('rsa export', async () => { const k = await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']); const j = await crypto.subtle.exportKey('jwk', k.privateKey); const jp = await crypto.subtle.exportKey('jwk', k.publicKey); const s = await crypto.subtle.exportKey('spki', k.publicKey); const p = await crypto.subtle.exportKey('pkcs8', k.privateKey); return [Object.keys(j).sort().join(','), j.alg, j.key_ops, Object.keys(jp).sort().join(','), jp.alg, jp.key_ops, s.byteLength]; });
  await t('rsa raw export', async () => { const k = await crypto.subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['encrypt', 'decrypt']); return crypto.subtle.exportKey('raw', k.publicKey); });
  await t('ecdsa sign', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']); const s = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, k.privateKey, raw); return [s.byteLength, await crypto.subtle.verify({ name: 'ECDSA', hash: { name: 'SHA-256' } }, k.publicKey, s, raw)]; });
  await t('pss sign', async () => { const k = await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify']); const s = await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 32 }, k.privateKey, raw); return [s.byteLength, await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, k.publicKey, s, raw)]; });
  await t('oaep', async () => { const k = await crypto.subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['encrypt', 'decrypt']); const c = await crypto.subtle.encrypt({ name: 'RSA-OAEP', label: new Uint8Array([1]) }, k.publicKey, raw); return [c.byteLength, ab(await crypto.subtle.decrypt({ name: 'RSA-OAEP', label: new Uint8Array([1]) }, k.privateKey, c))]; });
  await t('sign wrong key type', async () => { const k = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']); return crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, k.publicKey, raw); });
  await t('import jwk bad', () => crypto.subtle.importKey('jwk', { kty: 'oct', k: '!!!' }, { name: 'AES-GCM' }, true, ['encrypt']));
  await t('import spki garbage', () => crypto.subtle.importKey('spki', new Uint8Array(10), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await t('import bad format', () => crypto.subtle.importKey('pem', raw, { name: 'AES-GCM' }, true, ['encrypt']));
  await t('not a key', () => crypto.subtle.sign('HMAC', {}, raw));
  await t('sync throw?', () => { try { const p = crypto.subtle.digest('NOPE', raw); p.catch(() => {}); return 'promise ' + (p instanceof Promise); } catch (e) { return 'threw ' + e.name; } });
  console.log('RESULT ' + JSON.stringify(out));
}
