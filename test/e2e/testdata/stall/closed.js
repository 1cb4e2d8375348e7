// A closed loop against a stalling server: VUS VUs for DURATION, each
// sending a request, then pausing 10 ms. slow_requests counts the requests
// that took more than 100 ms.
import http from 'k6/http';
import { sleep } from 'k6';
import { Rate } from 'k6/metrics';

const slow = new Rate('slow_requests');

export const options = {
  scenarios: {
    closed: { executor: 'constant-vus', vus: Number(__ENV.VUS), duration: __ENV.DURATION },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  const res = http.get(__ENV.TARGET);
  slow.add(res.timings.duration > 100);
  sleep(0.01);
}
