// Issue 37, bug 4: a threshold key with an empty list, a common way to
// make k6 show a submetric, makes the submetric (or shows the metric) in
// the summary, --summary-export and handleSummary's data, with no
// threshold: k6 v2.2.0 lists http_reqs{status:200}, the trend and custom
// submetrics and checks (with zeros: no check ran) beside the one key
// that has a threshold.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import http from 'k6/http';
import { Counter } from 'k6/metrics';

const mine = new Counter('my_counter');

export const options = {
  iterations: 2,
  thresholds: {
    'http_reqs{status:200}': [],
    'http_req_duration{name:json}': [],
    'my_counter{kind:a}': [],
    'http_reqs{status:404}': ['count<5'],
    checks: [],
    iterations: [],
  },
};

export default function () {
  http.get(`${__ENV.BASE}/json`, { tags: { name: 'json' } });
  mine.add(1, { kind: 'a' });
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
