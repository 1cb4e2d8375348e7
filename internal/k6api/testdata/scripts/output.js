// An output extension (-o probe=FILE) gets every sample of an open-model
// run: the requests' corrected_latency and the iterations' schedule_lag
// with them. ABORT=1 aborts the test in its fifth iteration.
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    open: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '1s', preAllocatedVUs: 2 },
  },
  thresholds: { http_req_duration: ['p(95)<5000'], iterations: ['count>0'] },
};

export default function () {
  http.get(__ENV.TARGET);
  if (__ENV.ABORT === '1' && exec.scenario.iterationInTest === 4) {
    exec.test.abort('enough');
  }
}
