// The smallest useful test: one GET per iteration, a check, a threshold.
//
//   metronome run -u 10 -d 30s -e TARGET=http://127.0.0.1:8080 examples/get.js
import http from 'k6/http';
import { check } from 'k6';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  thresholds: {
    http_req_failed: ['rate<0.01'],
    http_req_duration: ['p(95)<200'],
  },
};

export default function () {
  const res = http.get(`${target}/`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
