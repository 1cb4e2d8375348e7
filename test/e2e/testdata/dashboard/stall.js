// Three scenarios for the web dashboard's test, for DURATION: against a
// stalling server (TARGET), an open model at RATE arrivals/s with one VU
// and a closed loop of one VU pacing itself at 10 ms, their requests named
// 'stalled'; against a server that never stalls (HEALTHY), an open model
// at 50 arrivals/s named 'healthy'. Each stall holds only two requests
// (under 1% of the stalled endpoint's), so its raw p99 stays low while its
// corrected p99 pays for every arrival the stall delayed.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    open: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE || 100),
      timeUnit: '1s',
      duration: __ENV.DURATION || '10s',
      preAllocatedVUs: 1,
      maxVUs: 1,
      gracefulStop: '3s',
      exec: 'open',
    },
    closed: {
      executor: 'constant-vus',
      vus: 1,
      duration: __ENV.DURATION || '10s',
      exec: 'closed',
    },
    healthy: {
      executor: 'constant-arrival-rate',
      rate: 50,
      timeUnit: '1s',
      duration: __ENV.DURATION || '10s',
      preAllocatedVUs: 5,
      exec: 'healthy',
    },
  },
  thresholds: {
    corrected_latency: ['p(99)<10000'],
  },
  summaryTrendStats: ['avg', 'med', 'max', 'p(99)', 'count'],
};

export function open() {
  http.get(__ENV.TARGET, { tags: { name: 'stalled' } });
}

export function closed() {
  http.get(__ENV.TARGET, { tags: { name: 'stalled' } });
  sleep(0.01);
}

export function healthy() {
  http.get(__ENV.HEALTHY, { tags: { name: 'healthy' } });
}
