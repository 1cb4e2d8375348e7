// 20 iterations on 3 VUs: one request, one check and one custom trend
// value each.
import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';

const size = new Trend('body_size');

export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 20 } },
  thresholds: { http_req_duration: ['p(95)<5000'] },
};

export default function () {
  const res = http.get(__ENV.TARGET, { tags: { kind: 'plain' } });
  check(res, { 'status is 200': (r) => r.status === 200 });
  size.add(res.body.length);
}
