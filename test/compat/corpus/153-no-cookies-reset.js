// options.noCookiesReset keeps the VU's cookies from one iteration to the
// next.
import http from 'k6/http';
import { check } from 'k6';

export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 2 } }, noCookiesReset: true };

export default function () {
  if (__ITER === 0) {
    http.get(`${__ENV.BASE}/cookies/set?kept=yes`);
  } else {
    check(http.get(`${__ENV.BASE}/cookies`), { 'cookie kept across iterations': (r) => r.json('cookies.kept') === 'yes' });
  }
}
