// A test that needs the extensions of examples/extension/counter, so it runs
// on a custom build of metronome, not on the stock binary:
//
//   go build -o metronome-counter ./examples/extension/cmd/metronome-counter
//   ./metronome-counter run -o counts=counts.txt -e TARGET=http://127.0.0.1:8080 \
//       examples/extension/counter/example.js
//
// Two VUs each start an iteration every 200ms for 2s (the pacing-vus
// executor), count their requests in one counter they share (the
// k6/x/counter module), and the counts output writes how many samples each
// metric received to counts.txt.
import http from 'k6/http';
import { check } from 'k6';
import counter from 'k6/x/counter';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    paced: {
      executor: 'pacing-vus',
      vus: Number(__ENV.VUS || 2),
      interval: __ENV.INTERVAL || '200ms',
      duration: __ENV.DURATION || '2s',
      gracefulStop: '5s',
    },
  },
  thresholds: {
    // teardown() publishes the shared total; it must have counted something.
    'counter_value{counter:requests}': ['value>0'],
    http_req_failed: ['rate==0'],
  },
};

export default function () {
  const n = counter.incr('requests');
  const res = http.get(`${target}/?vu=${__VU}&n=${n}`);
  if (!check(res, { 'status is 200': (r) => r.status === 200 })) {
    counter.incr('failures');
  }
}

export function teardown() {
  counter.record('requests');
  counter.record('failures');
  console.log(`requests counted by all VUs: ${counter.get('requests')}, failures: ${counter.get('failures')}`);
}
