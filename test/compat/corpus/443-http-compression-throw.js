// With the throw option, an unknown params.compression throws k6's error.
// compat:messages
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, throw: true };

export default function () {
  let err = '';
  try {
    http.post(`${__ENV.BASE}/decode`, 'x', { compression: 'gzip, lzw' });
  } catch (e) {
    err = String(e);
  }
  check(err, { 'thrown': (e) => e.endsWith('unknown compression algorithm lzw, supported algorithms are [gzip deflate zstd br]') });
  check(http.post(`${__ENV.BASE}/decode`, 'x', { compression: 'br' }), { 'a known one does not throw': (r) => r.json().ce === 'br' });
}
