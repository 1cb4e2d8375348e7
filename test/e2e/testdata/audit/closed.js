// docs/DESIGN.md §7's stall experiment in k6's closed model: 50 VUs for
// DURATION (default 10s), each sending a request to TARGET and pausing
// 50 ms, about 1,000 requests/s against a server that freezes 500 ms
// every 5 s. A stall holds each VU's one request; the requests the VUs
// would have sent meanwhile never happen. (A pause long beside the
// generator's own time per iteration keeps the cadence, and so the
// back-fill, the same in k6 and in metronome.)
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    closed: { executor: 'constant-vus', vus: 50, duration: __ENV.DURATION || '10s' },
  },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.05);
}
