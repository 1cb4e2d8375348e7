// The previous release's usage: iterations paced by wrap() but requests
// sent through k6/http, which intended.js cannot see. For one release it
// still records one corrected_latency per iteration, end − intended
// start with the sleep included, and warns once.
import http from 'k6/http';
import { sleep } from 'k6';
import { intendedScenario, wrap } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { legacy: intendedScenario({ rate: 10, duration: '1s', vus: 2 }) },
};

export default wrap(function () {
  http.get(__ENV.TARGET);
  sleep(0.05);
});
