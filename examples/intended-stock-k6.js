// Honest latency on stock k6: jslib/intended.js paces every iteration to
// its intended start time and records corrected_latency per request from
// it, with no custom k6 build. The same script runs in metronome.
//
//   k6 run -e TARGET=http://127.0.0.1:8080 examples/intended-stock-k6.js
//   metronome run -e TARGET=http://127.0.0.1:8080 -e RATE=200 examples/intended-stock-k6.js
//
// TARGET is the base URL, RATE the arrivals per second, DURATION how long
// the schedule runs and VUS the most iterations in flight at once: set it
// above RATE × the longest stall you expect, or late arrivals queue behind
// busy VUs (which corrected_latency then shows, but a bigger backlog than
// the server alone caused).
//
// Compared with a k6/http script, three lines differ: http comes from
// intended.js, the scenario from intendedScenario(), and the iteration
// function is wrapped in wrap(). Its body stays as it was.
import http, { intendedScenario, wrap } from '../jslib/intended.js';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    api: intendedScenario({
      rate: Number(__ENV.RATE || 100),
      timeUnit: '1s',
      duration: __ENV.DURATION || '30s',
      vus: Number(__ENV.VUS || 50),
    }),
  },
  thresholds: {
    corrected_latency: ['p(99)<1000'],
  },
};

export default wrap(function () {
  http.get(`${target}/`);
});
