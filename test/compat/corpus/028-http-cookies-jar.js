// Cookies set by the server live in the VU's jar for the iteration and
// are gone in the next one.
import http from 'k6/http';
import { check } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };

export default function () {
  const before = http.get(`${__ENV.BASE}/cookies`);
  check(before, { 'jar empty at iteration start': (r) => Object.keys(r.json('cookies')).length === 0 });
  const set = http.get(`${__ENV.BASE}/cookies/set?session=abc&theme=dark`);
  check(set, {
    'response cookies': (r) => r.cookies.session && r.cookies.session[0].value === 'abc',
  });
  const after = http.get(`${__ENV.BASE}/cookies`);
  check(after, { 'jar sends them': (r) => r.json('cookies.session') === 'abc' && r.json('cookies.theme') === 'dark' });
  const via = http.get(`${__ENV.BASE}/cookies/set?flow=redirect&redirect=1`);
  check(via, { 'cookie set during redirect': (r) => r.json('cookies.flow') === 'redirect' });
}
