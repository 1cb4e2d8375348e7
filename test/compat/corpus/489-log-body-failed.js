// k6/http's warning of a request whose body could not be read: k6 reads
// the body itself, after Go's client returned, so the error is the cause
// alone, without Go's `Get "URL": `: a body cut short (Content-Length
// 100, 10 bytes, then the connection closes), a body still arriving when
// the request's timeout passes, and a gzip body that is not gzip.
// compat:log
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE}/cut-body`);
  http.get(`${__ENV.BASE}/cut-body?stall`, { timeout: '2s' });
  http.get(`${__ENV.BASE}/gzip-bad`);
  http.batch([['POST', `${__ENV.BASE}/cut-body`, 'x']]);
}
