// Runs to the end, then fails its threshold: exit 99.
import http from 'k6/http';

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } },
  thresholds: { http_reqs: ['count>1000'] },
};

export default function () {
  http.get(__ENV.TARGET);
}
