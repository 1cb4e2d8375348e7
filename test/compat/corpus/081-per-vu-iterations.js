// per-vu-iterations: 4 VUs × 3 iterations each.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = { scenarios: { pervu: { executor: 'per-vu-iterations', vus: 4, iterations: 3 } } };

export default function () {
  http.get(`${__ENV.BASE}/`);
  sleep(0.02);
}
