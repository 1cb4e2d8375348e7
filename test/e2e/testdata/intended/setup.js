// intended.js behind a setup() that takes 1 s: the schedule counts from
// the scenario's start (exec.scenario.startTime), which comes after
// setup(), so no arrival is late.
import { sleep } from 'k6';
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { api: intendedScenario({ rate: 50, duration: '1s', vus: 5 }) },
};

export function setup() {
  sleep(1);
}

export default wrap(function () {
  http.get(__ENV.TARGET);
});
