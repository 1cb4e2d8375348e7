// k6/http's warning of a failed request: msg="Request Failed" and Go's
// client error in the field error, for a refused loopback port, a URL
// that does not parse, an ftp: URL, and inside http.batch.
// compat:log
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get('http://127.0.0.1:1/refused');
  http.get('http://[::1');
  http.get('ftp://127.0.0.1:1/file');
  http.batch([
    ['GET', 'http://127.0.0.1:1/batch'],
    ['POST', 'http://127.0.0.1:1/batch-post', 'body'],
  ]);
}
