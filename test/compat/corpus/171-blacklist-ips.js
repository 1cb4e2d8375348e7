// options.blacklistIPs blocks requests to the listed networks.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, blacklistIPs: ['127.0.0.0/8'] };

export default function () {
  const r = http.get(`${__ENV.BASE}/`);
  check(r, { [`status ${r.status} error_code ${r.error_code}`]: () => true });
}
