// One VU, 100 arrivals/s for 1 s, iterations of 50 ms that send a request
// to TARGET and sleep the rest, no grace: about 20 arrivals start before
// the schedule ends; the first iteration after that charges every arrival
// left over (outcome=dropped).
import { sleep } from 'k6';
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { slow: intendedScenario({ rate: 100, duration: '1s', vus: 1, grace: '0s' }) },
};

export default wrap(function () {
  const end = Date.now() + 50;
  http.get(__ENV.TARGET);
  sleep(Math.max(end - Date.now(), 0) / 1000);
});
