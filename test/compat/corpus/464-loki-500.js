// --log-output=loki to a Loki that answers 500: one error line on stderr
// quoting Loki's answer, no retry, and the test passes.
// compat:args --log-output=loki=${BASE}/loki/fail/464/push,pushPeriod=1m
import { check } from 'k6';

export const options = { iterations: 2, thresholds: { checks: ['rate==1'] } };

export default function () {
  console.log('lost line');
  check(1, { 'the run goes on': (v) => v === 1 });
}
