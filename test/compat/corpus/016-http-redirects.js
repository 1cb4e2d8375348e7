// Redirects are followed by default; every hop is a request of its own.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE}/redirect/3`);
  check(res, {
    'final status 200': (r) => r.status === 200,
    'final url': (r) => r.url === `${__ENV.BASE}/redirect/0`,
    'final body': (r) => r.body === 'redirected\n',
  });
  const limited = http.get(`${__ENV.BASE}/redirect/3`, { redirects: 1 });
  check(limited, {
    'stops after one redirect': (r) => r.status === 302,
    'stopped url': (r) => r.url === `${__ENV.BASE}/redirect/2`,
  });
  const none = http.get(`${__ENV.BASE}/redirect/1`, { redirects: 0 });
  check(none, { 'no redirect followed': (r) => r.status === 302 && r.headers['Location'] === '/redirect/0' });
}
