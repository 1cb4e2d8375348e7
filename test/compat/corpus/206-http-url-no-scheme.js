// A URL with no scheme, with a host k6 cannot read as one, or that is
// empty is sent as k6 sends it: a failed request (status 0, error_code
// 1000, Go's "unsupported protocol scheme"), measured and tagged with the
// URL in Go's form, counted in http_reqs and http_req_failed, so the
// threshold on http_req_failed fails. Only a URL that does not parse at
// all (a host:port with no scheme) fails at once with 1020 and records
// nothing. No shape here leaves the machine: none gets as far as a lookup.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, thresholds: { http_req_failed: ['rate<0.5'], http_reqs: ['count>=6'] } };

function show(label, r) {
  const req = r.request === null ? 'null' : r.request.url;
  check(r, { [`${label}: ${r.status} ${r.error_code} ${r.error} url=${r.url} request=${req} body=${JSON.stringify(r.body)}`]: () => true });
}

export default function () {
  show('placeholder', http.get('#{Endpoint}#'));
  show('host without scheme', http.get('localhost/status/200'));
  show('host:port read as a scheme', http.get('localhost:8080/status/200'));
  show('path only', http.get('/status/200'));
  show('empty', http.post('', 'x'));
  show('address:port', http.get(`${__ENV.BASE.slice("http://".length)}/status/200`));
  show('fine', http.get(`${__ENV.BASE}/status/200`));
}
