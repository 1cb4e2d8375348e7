// Thresholds that all pass: exit 0, export booleans false.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  iterations: 5,
  thresholds: {
    http_req_duration: ['p(95)<5000', 'avg<5000', 'max<10000', 'med<5000', 'min>=0'],
    http_reqs: ['count==5'],
    checks: ['rate==1'],
    iterations: ['count>=5'],
  },
};

export default function () {
  check(http.get(`${__ENV.BASE}/`), { ok: (r) => r.status === 200 });
}
