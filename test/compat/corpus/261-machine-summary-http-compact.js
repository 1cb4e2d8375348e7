// The machine-readable summary in the default (compact) mode leaves the
// HTTP timing parts (http_req_blocked … http_req_waiting) out of its
// metrics, as k6's compact text summary does; the export alone, without
// handleSummary. The trend stats are the schema's six whatever
// summaryTrendStats says: one it lacks is null, and p(99) and count are
// dropped.
// compat:args --new-machine-readable-summary --summary-trend-stats=avg,p(99),count,max
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  iterations: 3,
  thresholds: { 'http_req_duration{status:200}': ['max<10000'], 'http_reqs{status:404}': [] },
};

export default function () {
  const r = http.get(`${__ENV.BASE}/json`);
  check(r, { 'status is 200': (res) => res.status === 200 });
  http.get(`${__ENV.BASE}/status/404`);
}
