// The k6/crypto probe: run through k6 v2.2.0 with
//   k6 run -q --summary-mode=disabled --log-format=json k6crypto.js
// and recorded in k6crypto.k6.json; crypto_test.go runs it in metronome.
import crypto from 'k6/crypto';
import * as ns from 'k6/crypto';
export const options = { iterations: 1, vus: 1 };
function show(v) {
  if (v instanceof ArrayBuffer) return 'AB[' + Array.from(new Uint8Array(v)).join(',') + ']';
  if (Array.isArray(v)) return 'ARR[' + v.join(',') + ']';
  return typeof v + ':' + JSON.stringify(v);
}
const out = [];
function t(name, f) { try { out.push(name + ' => ' + show(f())); } catch (e) { out.push(name + ' !! ' + e.message); } }
export default function () {
  out.push('keys ' + Object.keys(ns).filter((k) => k !== 'default').sort().join(','));
  for (const a of ['md4','md5','sha1','sha256','sha384','sha512','sha512_224','sha512_256','ripemd160']) {
    t(a + ' hex', () => crypto[a]('hello', 'hex'));
  }
  for (const enc of ['hex','base64','base64url','base64rawurl','binary']) t('sha1 ' + enc, () => crypto.sha1('abc', enc));
  t('sha256 noenc', () => crypto.sha256('abc'));
  t('sha256 bad enc', () => crypto.sha256('abc', 'nope'));
  t('sha256 AB', () => crypto.sha256(new Uint8Array([1,2,3]).buffer, 'hex'));
  t('sha256 U8', () => crypto.sha256(new Uint8Array([1,2,3]), 'hex'));
  t('sha256 U8 sub', () => crypto.sha256(new Uint8Array(new Uint8Array([9,1,2,3]).buffer, 1), 'hex'));
  t('sha256 U16', () => crypto.sha256(new Uint16Array([1,2]), 'hex'));
  t('sha256 DV', () => crypto.sha256(new DataView(new Uint8Array([1,2,3]).buffer), 'hex'));
  t('sha256 arr', () => crypto.sha256([1,2,3], 'hex'));
  t('sha256 num', () => crypto.sha256(5, 'hex'));
  t('sha256 obj', () => crypto.sha256({}, 'hex'));
  t('sha256 undef', () => crypto.sha256(undefined, 'hex'));
  t('sha256 utf8', () => crypto.sha256('héllo ✓', 'hex'));
  t('hmac', () => crypto.hmac('sha256', 'key', 'The quick brown fox jumps over the lazy dog', 'hex'));
  t('hmac md4', () => crypto.hmac('md4', 'key', 'data', 'hex'));
  t('hmac ripemd160', () => crypto.hmac('ripemd160', 'key', 'data', 'base64'));
  t('hmac sha512_224', () => crypto.hmac('sha512_224', 'key', 'data', 'hex'));
  t('hmac keyAB', () => crypto.hmac('sha256', new Uint8Array([107,101,121]).buffer, 'data', 'hex'));
  t('hmac keyU8', () => crypto.hmac('sha256', new Uint8Array([107,101,121]), 'data', 'hex'));
  t('hmac bad alg', () => crypto.hmac('sha3', 'key', 'data', 'hex'));
  t('hmac binary', () => crypto.hmac('md5', 'key', 'data', 'binary'));
  t('hmac noenc', () => crypto.hmac('md5', 'key', 'data'));
  t('createHash', () => { const h = crypto.createHash('sha256'); h.update('ab'); h.update('c'); return h.digest('hex'); });
  t('createHash twice', () => { const h = crypto.createHash('sha256'); h.update('ab'); const a = h.digest('hex'); h.update('c'); return a + ' ' + h.digest('hex'); });
  t('createHash AB', () => { const h = crypto.createHash('md5'); h.update(new Uint8Array([1,2]).buffer); return h.digest('base64'); });
  t('createHash props', () => Object.keys(crypto.createHash('md5')).join(','));
  t('createHash chain', () => { const h = crypto.createHash('md5'); return String(h.update('x')); });
  t('createHash noenc', () => { const h = crypto.createHash('md5'); h.update('x'); return h.digest(); });
  t('createHMAC', () => { const h = crypto.createHMAC('sha256', 'key'); h.update('The quick brown fox '); h.update('jumps over the lazy dog'); return h.digest('base64'); });
  t('createHMAC bad', () => crypto.createHMAC('nope', 'k'));
  t('randomBytes', () => { const b = crypto.randomBytes(5); return (b instanceof ArrayBuffer) + ' ' + b.byteLength; });
  t('randomBytes 0', () => crypto.randomBytes(0).byteLength);
  t('randomBytes -1', () => crypto.randomBytes(-1));
  t('randomBytes str', () => crypto.randomBytes('3').byteLength);
  t('update bad', () => { const h = crypto.createHash('md5'); h.update(5); return h.digest('hex'); });
  t('update obj', () => { const h = crypto.createHash('md5'); h.update({}); return h.digest('hex'); });
  t('md5 empty', () => crypto.md5('', 'hex'));
  t('hexEncode', () => crypto.hexEncode('hé') + ' ' + crypto.hexEncode(new Uint8Array([1, 255]).buffer) + ' ' + crypto.hexEncode(new Uint8Array([1, 255])));
  console.log('RESULT ' + JSON.stringify(out));
}
