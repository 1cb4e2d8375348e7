// abortOnFail stops the test when a threshold is crossed, exit 99; the
// next evaluation after the first failing sample is at most 2 s later.
import { Rate } from 'k6/metrics';
import { sleep } from 'k6';

const ok = new Rate('ok_rate');

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 1, duration: '20s' } },
  thresholds: { ok_rate: [{ threshold: 'rate>0.5', abortOnFail: true }] },
};

export default function () {
  ok.add(false);
  sleep(0.5);
}
