// A 20 s run whose threshold fails at once and aborts it at the first
// evaluation (every 2 s): exit 99, long before 20 s.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 1, duration: '20s' } },
  thresholds: { iterations: [{ threshold: 'count<3', abortOnFail: true }] },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.05);
}

export function teardown() {
  console.log('TEARDOWN-RAN');
}
