// Several scenarios in one run: a closed-model browse flow ramping up and
// down, and an API hit at a fixed arrival rate, starting 10 s later.
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { Trend } from 'k6/metrics';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';
const pageTime = new Trend('page_time', true);

export const options = {
  scenarios: {
    browse: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: '10s', target: 10 },
        { duration: '10s', target: 0 },
      ],
      gracefulRampDown: '5s',
    },
    api: {
      executor: 'constant-arrival-rate',
      rate: 50,
      timeUnit: '1s',
      duration: '10s',
      preAllocatedVUs: 5,
      maxVUs: 20,
      startTime: '10s',
      exec: 'api',
      tags: { kind: 'api' },
    },
  },
  thresholds: {
    'http_req_duration{kind:api}': ['p(99)<300'],
    checks: ['rate>0.99'],
  },
};

export default function () {
  group('home', () => {
    const res = http.get(`${target}/`);
    check(res, { 'home is 200': (r) => r.status === 200 });
    pageTime.add(res.timings.duration);
  });
  sleep(1);
}

export function api() {
  const res = http.get(`${target}/api`);
  check(res, { 'api is 200': (r) => r.status === 200 });
}
