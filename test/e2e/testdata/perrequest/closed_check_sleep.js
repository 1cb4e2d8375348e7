// Issue 22's second example: 5 VUs in a closed loop, each request checked,
// then a 0.5 s pause. The pause is think time, in no corrected value.
import http from 'k6/http';
import { check, sleep } from 'k6';

export const options = {
  scenarios: {
    closed: { executor: 'constant-vus', vus: 5, duration: __ENV.DURATION || '5s' },
  },
  summaryTrendStats: ['count', 'med', 'p(99)', 'max'],
};

export default function () {
  const res = http.get(`${__ENV.TARGET}/delay/1`);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(0.5);
}
