// Thresholds on submetrics: tags of requests, checks and groups.
import http from 'k6/http';
import { check, group } from 'k6';

export const options = {
  iterations: 2,
  thresholds: {
    'http_req_duration{name:fast}': ['max<5000'],
    'http_reqs{status:404}': ['count==2'],
    'checks{check:fine}': ['rate==1'],
    'checks{group:::g}': ['rate<0.6'],
    'http_req_failed{kind:bad}': ['rate==1'],
  },
};

export default function () {
  http.get(`${__ENV.BASE}/`, { tags: { name: 'fast' } });
  http.get(`${__ENV.BASE}/status/404`, { tags: { kind: 'bad' } });
  check(null, { fine: () => true });
  group('g', () => { check(null, { 'half': () => __ITER === 0 }); });
}
