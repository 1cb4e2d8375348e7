// Without insecureSkipTLSVerify a self-signed certificate fails the
// request (status 0, an x509 error code).
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const r = http.get(`${__ENV.TLS_BASE}/`);
  check(r, { [`status ${r.status} error_code ${r.error_code}`]: () => true });
}
