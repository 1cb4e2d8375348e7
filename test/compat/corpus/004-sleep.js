// sleep() between requests; iteration_duration is at least the sleep.
import http from 'k6/http';
import { sleep, check } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  const t0 = Date.now();
  http.get(`${__ENV.BASE}/`);
  sleep(0.1);
  check(Date.now() - t0, { 'slept at least 90 ms': (d) => d >= 90 });
}
