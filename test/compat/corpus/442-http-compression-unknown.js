// An algorithm k6 does not know (names are matched with their case, and
// undefined and null are read as strings) fails the request before it is
// sent: status 0, error_code 0, k6's error, an empty url and a null
// request, a Request Failed warning, and nothing in http_reqs. In
// http.batch it stops the batch as an invalid URL does. (The warnings
// are not compared: the suite reads only the message of k6's, not its
// error field; js/modules/http's TestCompressionUnknown checks them.)
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const u = `${__ENV.BASE}/decode`;
  for (const c of ['lzw', 'GZIP', 'gzip,', 'gzip;br', undefined, null, 7]) {
    const r = http.post(u, 'x', { compression: c });
    check(r, {
      [`${c}: fails unsent`]: (res) => res.status === 0 && res.error_code === 0 && res.url === '' && res.request === null,
      [`${c}: k6's error`]: (res) => res.error === `unknown compression algorithm ${c === 'gzip,' ? '' : String(c)}, supported algorithms are [gzip deflate zstd br]`,
    });
  }
  const rs = http.batch([['POST', u, 'x', { compression: 'gzip' }], ['POST', u, 'y', { compression: 'lzw' }], ['GET', u]]);
  check(rs, {
    'batch: the request before is empty': (a) => a[0].status === 0 && a[0].error === '',
    'batch: the refused request has the error': (a) => a[1].error_code === 0 && a[1].error.startsWith('unknown compression algorithm lzw'),
    'batch: the request after is null': (a) => a[2] === null,
  });
  check(http.post(u, 'x', { compression: 'gzip' }), { 'a known one still works': (r) => r.json().ce === 'gzip' });
}
