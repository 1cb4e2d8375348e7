import http from 'k6/http';
import { sleep } from 'k6';

// Five requests at the start, then three seconds without any. metronome
// judges http_reqs' count on every one-second window and fails those after
// the burst; k6 v2.2.0 ignores the window key and judges the whole run.
export const options = {
  scenarios: {
    burst: { executor: 'shared-iterations', vus: 1, iterations: 5, exec: 'burst' },
    idle: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'idle' },
  },
  thresholds: {
    http_reqs: [{ threshold: 'count>=5', window: '1s' }],
  },
};

export function burst() { http.get(__ENV.TARGET); }
export function idle() { sleep(3); }
