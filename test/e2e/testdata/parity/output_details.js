// Output details compared with k6: a ramping-vus scenario from 1 to 6 VUs
// beside a later one of 2 VUs whose requests run in a group, and a
// setup() and teardown() that make requests.
import http from 'k6/http';
import { group, sleep } from 'k6';

export const options = {
  scenarios: {
    rv: { executor: 'ramping-vus', startVUs: 1, stages: [{ duration: '2s', target: 6 }, { duration: '1s', target: 0 }], gracefulRampDown: '0s' },
    later: { executor: 'per-vu-iterations', vus: 2, iterations: 1, startTime: '1s', exec: 'grouped' },
  },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.2);
}

export function grouped() {
  group('g1', () => {
    http.get(__ENV.TARGET);
    http.get(__ENV.TARGET);
  });
}

export function setup() {
  http.get(__ENV.TARGET);
}

export function teardown() {
  http.get(__ENV.TARGET);
}
