// Two scenarios against a stalling server, for the web dashboard's test:
// an open model at RATE arrivals/s and a closed loop of 2 VUs pacing
// themselves at 10 ms, both for DURATION.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    open: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE || 100),
      timeUnit: '1s',
      duration: __ENV.DURATION || '10s',
      preAllocatedVUs: 10,
      maxVUs: 10,
      gracefulStop: '3s',
      exec: 'open',
    },
    closed: {
      executor: 'constant-vus',
      vus: 2,
      duration: __ENV.DURATION || '10s',
      exec: 'closed',
    },
  },
  thresholds: {
    corrected_latency: ['p(99)<10000'],
  },
  summaryTrendStats: ['avg', 'med', 'max', 'p(99)', 'count'],
};

export function open() {
  http.get(__ENV.TARGET);
}

export function closed() {
  http.get(__ENV.TARGET);
  sleep(0.01);
}
