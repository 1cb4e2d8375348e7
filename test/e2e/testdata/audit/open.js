// docs/DESIGN.md §7's stall experiment in k6's own open-model executor:
// 1,000 arrivals/s for DURATION (default 10s) against TARGET, a server
// that freezes 500 ms every 5 s. 20 VUs are plenty between stalls; a stall
// holds all 20, and k6 drops the arrivals it finds no VU for.
import http from 'k6/http';

export const options = {
  scenarios: {
    open: {
      executor: 'constant-arrival-rate',
      rate: 1000,
      timeUnit: '1s',
      duration: __ENV.DURATION || '10s',
      preAllocatedVUs: 20,
      maxVUs: 20,
    },
  },
};

export default function () {
  http.get(__ENV.TARGET);
}
