// The script `metronome demo` runs: the same target, the same rate of about
// 1,000 requests/s, measured two ways. The target freezes for 500 ms every
// 5 s.
//
// closed: 10 VUs in a loop, each pacing itself to one request per 10 ms —
//         the way most load tests are written. While the server is frozen
//         the VUs wait, so they stop sending: each stall costs each VU one
//         slow request and nothing more.
// open:   intended-arrival-rate at 1,000/s, with the same 10 VUs. Every request has an intended
//         start time fixed in advance; a stall delays every arrival it
//         covers, and corrected_latency charges the delay.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';

const target = __ENV.TARGET;
const rawSlow = new Rate('demo_raw_over_100ms');
const correctedSlow = new Rate('demo_corrected_over_100ms');

export const options = {
  scenarios: {
    closed: {
      executor: 'constant-vus', vus: 10, duration: '9s', gracefulStop: '1s',
      exec: 'closed', expectedInterval: '10ms',
    },
    open: {
      executor: 'intended-arrival-rate', rate: 1000, timeUnit: '1s', duration: '9s',
      preAllocatedVUs: 10, maxVUs: 10, startTime: '10s', gracefulStop: '2s', exec: 'open',
    },
  },
  // Thresholds that always pass: they make the summary keep one
  // submetric per scenario, which the side-by-side table reads.
  thresholds: {
    'http_reqs{scenario:closed}': ['count>=0'],
    'http_reqs{scenario:open}': ['count>=0'],
    'http_req_duration{scenario:closed}': ['max>=0'],
    'http_req_duration{scenario:open}': ['max>=0'],
    'corrected_latency{scenario:closed}': ['max>=0'],
    'corrected_latency{scenario:open}': ['max>=0'],
    'schedule_lag{scenario:open}': ['max>=0'],
    'demo_raw_over_100ms{scenario:closed}': ['rate>=0'],
    'demo_raw_over_100ms{scenario:open}': ['rate>=0'],
    'demo_corrected_over_100ms{scenario:open}': ['rate>=0'],
    'dropped_iterations{scenario:open}': ['count>=0'],
  },
  summaryTrendStats: ['med', 'p(99)', 'p(99.9)', 'max', 'count'],
};

export function closed() {
  const start = Date.now();
  const res = http.get(target);
  rawSlow.add(res.timings.duration > 100);
  const left = 10 - (Date.now() - start);
  if (left > 0) {
    sleep(left / 1000);
  }
}

export function open() {
  const res = http.get(target);
  rawSlow.add(res.timings.duration > 100);
  correctedSlow.add(Date.now() - exec.scenario.intendedStartTime > 100);
}

// The demo prints its own table from the summary export.
export function handleSummary() {
  return {};
}
