// A URL that does not parse is refused before the request, as in k6:
// error_code 1020, "invalid URL: parse …", an empty url, a null request
// and an empty array for a body, nothing measured. The throw param does not
// make it throw (only the throw option does), http.url throws at once, and
// a batch holding one sends nothing: the requests before it get empty
// responses, the ones after it null.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

function show(label, r) {
  if (r === null || r === undefined) {
    check(null, { [`${label}: ${r}`]: () => true });
    return;
  }
  check(r, {
    [`${label}: ${r.status} ${r.error_code} ${r.error} url=${JSON.stringify(r.url)} request=${r.request} body=${JSON.stringify(r.body)} array=${Array.isArray(r.body)}`]: () => true,
  });
}

export default function () {
  show('bad host', http.get('http://[fe80'));
  show('space in host', http.get('http://a b/'));
  show('throw param', http.get('http://[fe80', { throw: true }));
  try {
    http.url`http://[fe80/items/${1}`;
    check(null, { 'http.url: nothing thrown': () => true });
  } catch (e) {
    check(null, { [`http.url: ${e.name}: ${e.message}`]: () => true });
  }
  const rs = http.batch([`${__ENV.BASE}/status/200`, 'ftp://localhost/x', 'http://[fe80', `${__ENV.BASE}/status/201`]);
  check(rs, { [`batch length ${rs.length}`]: () => true });
  for (let i = 0; i < rs.length; i++) show(`batch ${i}`, rs[i]);
  const ro = http.batch({ bad: 'http://[fe80' });
  check(ro, { [`batch object keys ${Object.keys(ro)}`]: () => true });
  show('batch object', ro.bad);
}
