// A test that needs the replay-arrivals executor of
// examples/extension/replay, so it runs on a custom build of metronome:
//
//   metronome build --with github.com/metronome-load/metronome/examples/extension/replay
//   ./metronome run -e TARGET=http://127.0.0.1:8080 -e ARRIVALS=arrivals.txt example.js
//
// Each line of arrivals.txt is when one request was sent in production,
// as an offset from the start of the recording; metronome starts each
// iteration at that offset and counts corrected_latency from it, so a
// slow server cannot slow the replay down.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    replay: {
      executor: 'replay-arrivals',
      file: __ENV.ARRIVALS || 'arrivals.txt', // relative to the working directory
      preAllocatedVUs: 2,
      maxVUs: Number(__ENV.MAX_VUS || 20),
      policy: __ENV.POLICY || 'queue', // or 'drop', as k6's arrival-rate executors
      gracefulStop: '5s',
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    corrected_latency: ['p(99)<500'],
  },
};

export default function () {
  const res = http.get(`${target}/?i=${exec.scenario.iterationInTest}`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
