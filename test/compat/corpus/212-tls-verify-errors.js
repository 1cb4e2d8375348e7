// TLS failures get k6's error codes and texts: an expired or not yet valid
// certificate 1000 with x509's message, one for another host 1311 "x509:
// certificate doesn't match hostname", an unknown issuer 1310 "x509:
// unknown authority", an alert from the server (one of TLS 1.0 only)
// 1010 "remote error: tls: …". The throw param throws Go's full message.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  for (const name of ['TLS_EXPIRED', 'TLS_NOT_YET', 'TLS_WRONG_HOST', 'TLS_BASE', 'TLS_OLD']) {
    const r = http.get(`${__ENV[name]}/`);
    check(r, { [`${name}: ${r.status} ${r.error_code} ${r.error}`]: () => true });
  }
  for (const name of ['TLS_EXPIRED', 'TLS_WRONG_HOST', 'TLS_BASE']) {
    try {
      http.get(`${__ENV[name]}/`, { throw: true });
    } catch (e) {
      check(null, { [`throw ${name}: ${e}`]: () => true });
    }
  }
}
