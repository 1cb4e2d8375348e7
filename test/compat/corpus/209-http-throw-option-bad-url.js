// With the throw option, a URL that does not parse throws its "invalid
// URL" error, in a request, a batch and asyncRequest; a URL of another
// scheme throws Go's client error.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, throw: true };

function attempt(label, f) {
  try {
    f();
    check(null, { [`${label}: nothing thrown`]: () => true });
  } catch (e) {
    check(null, { [`${label}: ${e}`]: () => true });
  }
}

export default async function () {
  attempt('get', () => http.get('http://[fe80'));
  attempt('batch', () => http.batch([`${__ENV.BASE}/status/200`, 'http://[fe80']));
  attempt('no scheme', () => http.get('localhost/x'));
  let rejected = false;
  try {
    await http.asyncRequest('GET', 'http://[fe80');
  } catch (e) {
    // k6 rejects with Go's error itself, not an Error: only the fact is compared.
    rejected = true;
  }
  check(rejected, { 'async rejects': (x) => x === true });
}
