// params.compression with every kind of body, in http.batch and
// http.asyncRequest, and what the response's request shows: the body
// as the script gave it and the Content-Encoding sent. A script's own
// Content-Encoding is sent as it is over the compressed body, with k6's
// warning when it differs; its own Content-Length gives way to the
// compressed length.
// compat:messages
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  const u = `${__ENV.BASE}/decode`;
  let r = http.post(u, '', { compression: 'gzip' });
  check(r.json(), { 'an empty body is compressed': (x) => x.ce === 'gzip' && x.hex === '1f8b08000000000000ff010000ffff0000000000000000' && x.body === '' });
  r = http.post(u, null, { compression: 'gzip' });
  check(r.json(), { 'no body: nothing compressed': (x) => x.ce === '' && x.wire === 0 });
  r = http.get(u, { compression: 'gzip' });
  check(r.json(), { 'a GET: nothing compressed': (x) => x.ce === '' && x.wire === 0 });
  r = http.post(u, { a: '1', b: 'x y' }, { compression: 'deflate' });
  check(r.json(), { 'a form is encoded, then compressed': (x) => x.ce === 'deflate' && x.body === 'a=1&b=x+y' && x.content_type === 'application/x-www-form-urlencoded' });
  check(r, {
    'request.body is the form before compression': (res) => res.request.body === 'a=1&b=x+y',
    'request.headers has the Content-Encoding': (res) => res.request.headers['Content-Encoding'][0] === 'deflate',
  });
  r = http.post(u, new Uint8Array([1, 2, 3, 4, 250]).buffer, { compression: 'br' });
  check(r.json(), { 'an ArrayBuffer is compressed': (x) => x.ce === 'br' && x.body === '\u0001\u0002\u0003\u0004\ufffd' });

  r = http.post(u, 'hello', { compression: 'gzip', headers: { 'content-encoding': 'gzip' } });
  check(r.json(), { 'the same Content-Encoding of the script': (x) => x.ce === 'gzip' && x.body === 'hello' });
  r = http.post(u, 'hello', { headers: { 'Content-Encoding': 'identity' }, compression: 'gzip' });
  check(r.json(), { 'another Content-Encoding of the script is sent over gzip': (x) => x.ce === 'identity' && x.hex.startsWith('1f8b') });
  r = http.post(u, 'hello', { compression: 'gzip', headers: { 'Content-Length': '5' } });
  check(r.json(), { 'a Content-Length of the script gives way': (x) => x.content_length === 29 && x.wire === 29 && x.body === 'hello' });

  const rs = http.batch([
    ['POST', u, 'one', { compression: 'gzip' }],
    { method: 'POST', url: u, body: 'two', params: { compression: 'zstd, br' } },
  ]);
  check(rs, { 'batch compresses each': (a) => a[0].json().ce === 'gzip' && a[0].json().body === 'one' && a[1].json().ce === 'zstd, br' && a[1].json().body === 'two' });
  const ar = await http.asyncRequest('POST', u, 'three', { compression: 'deflate' });
  check(ar.json(), { 'asyncRequest compresses': (x) => x.ce === 'deflate' && x.body === 'three' });
}
