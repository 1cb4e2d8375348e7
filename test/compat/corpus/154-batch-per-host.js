// options.batch and batchPerHost limit parallel batch requests; all
// responses still arrive in order.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, batch: 2, batchPerHost: 1 };

export default function () {
  const rs = http.batch([1, 2, 3, 4].map((i) => `${__ENV.BASE}/slow?ms=${i * 10}`));
  check(rs, { 'all ok in order': (r) => r.length === 4 && r.every((x, i) => x.status === 200 && x.url.endsWith(`ms=${(i + 1) * 10}`)) });
}
