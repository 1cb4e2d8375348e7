// Issue 25: the rps option limits HTTP requests per second across all VUs,
// as in k6: each request (each batch element, not each redirect) waits for
// its turn before it is sent, so the wait is in no timing of the request.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = { rps: 5, vus: 2, iterations: 2 };

export default function () {
  const t0 = Date.now();
  http.get(`${__ENV.BASE}/`);
  const r = http.get(`${__ENV.BASE}/redirect/1`);
  const b = http.batch([['GET', `${__ENV.BASE}/`]]);
  check(r, {
    'a VU waits for its turn': () => Date.now() - t0 >= 380,
    'the wait is not in http_req_blocked': (res) => res.timings.blocked < 100 && b[0].timings.blocked < 100,
    'the wait is not in the duration': (res) => res.timings.duration < 100,
    // Both VUs' 6 requests share one limit and go out 200 ms apart: the
    // VU that sends the sixth does so at 1 s, the other one earlier, so
    // this passes once and fails once (a limit per VU would fail twice).
    'this VU sent the sixth request, 5 intervals after the first': () =>
      exec.instance.currentTestRunDuration >= 980,
  });
}
