// maxDuration with gracefulStop 0: a long iteration is interrupted and not
// counted; the VU's remaining iterations are dropped.
import { sleep } from 'k6';
import { Counter } from 'k6/metrics';

const started = new Counter('started');

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3, maxDuration: '1s', gracefulStop: '0s' } },
};

export default function () {
  started.add(1);
  sleep(__ITER === 0 ? 0.2 : 5);
}
