// A URL of a scheme other than http and https, or with no host, is a
// failed request as in k6 (error_code 1000, "unsupported protocol scheme
// \"ftp\"", "http: no Host in request URL"), in http.get, http.batch,
// http.asyncRequest and with http.url, whose name tag it keeps. The throw
// param makes it throw Go's client error, with the password masked.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, thresholds: { http_req_failed: ['rate<0.5'] } };

function show(label, r) {
  check(r, { [`${label}: ${r.status} ${r.error_code} ${r.error} url=${r.url} request=${r.request.url}`]: () => true });
}

export default async function () {
  show('ftp', http.get('ftp://localhost/x'));
  show('file', http.get('file:///etc/passwd'));
  show('data', http.get('data:text/plain,hi'));
  show('mailto', http.get('mailto:someone@localhost'));
  show('no host', http.get('http:///x'));
  show('no host https', http.get('https:///x'));
  show('nothing after the scheme', http.get('http://'));
  show('credentials', http.get('ftp://user:secret@localhost/x'));
  const rs = http.batch(['ftp://localhost/b', ['POST', 'http:///b', 'x'], { method: 'GET', url: `${__ENV.BASE}/status/200` }]);
  rs.forEach((r, i) => show(`batch ${i}`, r));
  show('async', await http.asyncRequest('GET', 'ftp://localhost/a'));
  const id = 7;
  show('http.url', http.get(http.url`ftp://localhost/items/${id}`));
  show('http.url no host', http.get(http.url`http:///items/${id}`));
  for (const u of ['ftp://user:secret@localhost/t', 'http:///t']) {
    try {
      http.patch(u, 'x', { throw: true });
      check(null, { [`throw ${u}: nothing thrown`]: () => true });
    } catch (e) {
      check(null, { [`throw ${u}: ${e.name}: ${e.message}`]: () => true });
    }
  }
  let rejected = false;
  try {
    await http.asyncRequest('GET', 'ftp://localhost/r', null, { throw: true });
  } catch (e) {
    // k6 rejects with Go's error itself, not an Error: only the fact is compared.
    rejected = true;
  }
  check(rejected, { 'async throw rejects': (x) => x === true });
  try {
    http.batch(['ftp://localhost/bt', `${__ENV.BASE}/status/200`].map((url) => ({ url, params: { throw: true } })));
  } catch (e) {
    check(null, { [`batch throw: ${e}`]: () => true });
  }
}
