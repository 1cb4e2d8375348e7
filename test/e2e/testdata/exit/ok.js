// A passing run: one request per iteration, a threshold that holds.
import http from 'k6/http';

export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 6 } },
  thresholds: { http_reqs: ['count==6'] },
};

export default function () {
  http.get(__ENV.TARGET);
}
