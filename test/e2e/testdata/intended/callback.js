// Two arrivals whose wrapped function returns before its request is sent:
// the request goes out from a promise callback of the same iteration, which
// k6 runs before it ends the iteration. It is measured like any other, and
// the test goes on.
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { callback: intendedScenario({ rate: 2, duration: '1s', vus: 1 }) },
};

export default wrap(function () {
  Promise.resolve().then(() => {
    http.get(`${__ENV.TARGET}/?then`, { tags: { name: 'then' } });
  });
});
