// intended.js with think time, against the stall server: every arrival
// sends "first", thinks 50 ms and sends "second", RATE arrivals/s for
// DURATION on VUS VUs. The iteration is plain k6 code: only the import of
// http, the scenario and wrap() differ from a k6/http script. NATIVE=1
// runs the same iteration in metronome's own intended-arrival-rate
// executor instead, for the numbers intended.js must reproduce.
import { sleep } from 'k6';
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

const rate = Number(__ENV.RATE);
const vus = Number(__ENV.VUS);
const native = __ENV.NATIVE === '1';

export const options = {
  scenarios: {
    think: native
      ? { executor: 'intended-arrival-rate', rate, timeUnit: '1s', duration: __ENV.DURATION, preAllocatedVUs: vus, maxVUs: vus }
      : intendedScenario({ rate, duration: __ENV.DURATION, vus }),
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

function iteration() {
  http.get(`${__ENV.TARGET}/first`, { tags: { name: 'first' } });
  sleep(0.05);
  http.get(`${__ENV.TARGET}/second`, { tags: { name: 'second' } });
}

export default native ? iteration : wrap(iteration);
