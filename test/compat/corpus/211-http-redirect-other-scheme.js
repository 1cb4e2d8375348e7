// A redirect to a scheme the client cannot follow (file:, ftp:, data:) or
// to a URL with no host is followed as in k6: the 302 is measured, then a
// failed request to the target (status 0, error_code 1000, "unsupported
// protocol scheme \"file\"", url the target), so http_req_failed sees it.
// With redirects: 0 the 302 is the response. A Location that does not
// parse fails the redirect itself.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, thresholds: { http_req_failed: ['rate<0.3'] } };

function show(label, r) {
  check(r, {
    [`${label}: ${r.status} ${r.error_code} ${r.error} url=${r.url} request=${r.request.url} body=${r.body} headers=${Object.keys(r.headers).length}`]: () => true,
  });
}

const to = (target) => `${__ENV.BASE}/redirect-to?url=${encodeURIComponent(target)}`;

export default function () {
  show('file', http.get(to('file:///etc/passwd')));
  show('ftp', http.get(to('ftp://localhost/x')));
  show('data', http.get(to('data:text/plain,hi')));
  show('no host', http.get(to('http:///x')));
  show('post', http.post(to('file:///etc/passwd'), 'x'));
  show('named', http.get(to('file:///etc/passwd'), { tags: { name: 'redirect' } }));
  show('not followed', http.get(to('file:///etc/passwd'), { redirects: 0 }));
  show('bad location', http.get(to('http://[fe80')));
  show('bad location, not followed', http.get(to('http://[fe80'), { redirects: 0 }));
  try {
    http.get(to('file:///etc/passwd'), { throw: true });
  } catch (e) {
    check(null, { [`throw: ${e}`]: () => true });
  }
}
