// A scenario made by intendedScenario() whose function wrap() does not
// pace: nothing would hold its iterations to their intended times, so the
// first request through intended.js's http aborts the test.
import http, { intendedScenario } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { api: intendedScenario({ rate: 10, duration: '1s', vus: 1 }) },
};

export default function () {
  http.get(__ENV.TARGET);
}
