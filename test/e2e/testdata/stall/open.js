// metronome's open model against a stalling server: RATE arrivals/s for
// DURATION on up to VUS VUs. slow_arrivals counts the arrivals whose
// request ended more than 100 ms after their intended start,
// slow_requests the requests that themselves took more than 100 ms.
import http from 'k6/http';
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';

const slow = new Rate('slow_arrivals');
const slowRequests = new Rate('slow_requests');

export const options = {
  scenarios: {
    open: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE),
      timeUnit: '1s',
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS),
      maxVUs: Number(__ENV.VUS),
      gracefulStop: '5s',
    },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  const res = http.get(__ENV.TARGET);
  slowRequests.add(res.timings.duration > 100);
  slow.add(Date.now() - exec.scenario.intendedStartTime > 100);
}
