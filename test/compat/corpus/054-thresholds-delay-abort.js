// delayAbortEval postpones abortOnFail: the test runs its 3 s schedule of
// iterations and fails at the end (exit 99).
import { Rate } from 'k6/metrics';
import { sleep } from 'k6';

const ok = new Rate('ok_rate');

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 4 } },
  thresholds: { ok_rate: [{ threshold: 'rate>0.5', abortOnFail: true, delayAbortEval: '10s' }] },
};

export default function () {
  ok.add(false);
  sleep(0.3);
}
