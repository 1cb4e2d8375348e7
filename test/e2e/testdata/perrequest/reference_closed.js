// docs/DESIGN.md §7's closed loop in real time: one user sends, waits for
// the 10 ms reply, thinks 2.5 ms and sends again, 450 times, against a
// server that freezes 500 ms once. corrected_latency is back-filled per
// request from the VU's own cadence ('auto', the default).
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    closed: { executor: 'per-vu-iterations', vus: 1, iterations: 450, maxDuration: '60s', expectedInterval: 'auto' },
  },
  summaryTrendStats: ['count', 'med', 'p(90)', 'p(99)', 'max'],
};

export default function () {
  http.get(`${__ENV.TARGET}/delay/10`);
  sleep(0.0025);
}
