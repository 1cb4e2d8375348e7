// The script `metronome demo` runs: the same target, a rate of
// 400-800 requests/s, measured two ways. The target freezes for 500 ms every
// 5 s. Each iteration is a short visit, as real scripts are written: a
// request for the home page, a pause, a request for an item, a pause. The
// pauses are the user's think time; they are never latency.
//
// closed: 10 VUs in a loop, the way most load tests are written. While the
//         server is frozen the VUs wait, so they stop sending: each stall
//         costs each VU one slow request and nothing more.
// open:   intended-arrival-rate at 200 visits/s, with the same 10 VUs.
//         Every visit has an intended start time fixed in advance; a stall
//         delays every visit it covers, and corrected_latency charges each
//         of its requests the delay.
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
      executor: 'constant-vus', vus: 10, duration: '9s', gracefulStop: '1s', exec: 'visit',
    },
    open: {
      executor: 'intended-arrival-rate', rate: 200, timeUnit: '1s', duration: '9s',
      preAllocatedVUs: 10, maxVUs: 10, startTime: '10s', gracefulStop: '2s', exec: 'visit',
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

export function visit() {
  // How late this visit started (open model only): the demo counts, as
  // corrected_latency does, each request's own time plus this.
  const intended = exec.scenario.intendedStartTime;
  const late = intended ? Date.now() - intended : 0;
  for (const page of ['home', 'item']) {
    const res = http.get(`${target}${page}`, { tags: { name: page } });
    rawSlow.add(res.timings.duration > 100);
    if (intended) {
      correctedSlow.add(late + res.timings.duration > 100);
    }
    sleep(0.01);
  }
}

// The demo prints its own table from the summary export.
export function handleSummary() {
  return {};
}
