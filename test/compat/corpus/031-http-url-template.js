// http.url tagged template: the name tag is the template, not the URL.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const code = 200 + __ITER;
  const res = http.get(http.url`${__ENV.BASE}/status/${code}`);
  check(res, { 'status from template': (r) => r.status === code });
}
