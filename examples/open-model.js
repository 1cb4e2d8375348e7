// An open-model test: 200 arrivals per second for 30 s, each at its
// intended time whatever the server does. corrected_latency measures every
// request from the moment it should have been sent.
//
//   metronome run -e TARGET=http://127.0.0.1:8080 examples/open-model.js
import http from 'k6/http';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    api: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE || 200),
      timeUnit: '1s',
      duration: __ENV.DURATION || '30s',
      preAllocatedVUs: 20,
      maxVUs: 200,
    },
  },
  thresholds: {
    corrected_latency: ['p(99)<500'],
    'corrected_latency{outcome:dropped}': ['count<1'],
  },
};

export default function () {
  http.get(`${target}/`);
}
