// shared-iterations: 3 VUs share 10 iterations.
import http from 'k6/http';

export const options = { scenarios: { shared: { executor: 'shared-iterations', vus: 3, iterations: 10, maxDuration: '30s' } } };

export default function () {
  http.get(`${__ENV.BASE}/`);
}
