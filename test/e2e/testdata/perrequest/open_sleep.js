// Issue 22's first example: an open model at 80 iterations/s whose
// iterations send one request to a target that answers in 10 ms, then
// sleep 100 ms. The sleep is think time: corrected_latency must equal the
// request's own time, not request + sleep.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    open: {
      executor: 'constant-arrival-rate', rate: 80, timeUnit: '1s', duration: __ENV.DURATION || '6s',
      preAllocatedVUs: 20,
    },
  },
  summaryTrendStats: ['count', 'med', 'p(99)', 'max'],
};

export default function () {
  http.get(`${__ENV.TARGET}/delay/10`);
  sleep(0.1);
}
