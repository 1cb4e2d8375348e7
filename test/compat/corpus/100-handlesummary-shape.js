// handleSummary receives k6's data object; its shape is compared key by
// key. Checks, groups, thresholds and every metric type are present.
import http from 'k6/http';
import { check, group } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

const c = new Counter('hs_counter');
const g = new Gauge('hs_gauge');
const r = new Rate('hs_rate');
const t = new Trend('hs_trend');

export const options = {
  iterations: 2,
  thresholds: { hs_counter: ['count>0'], 'hs_trend{kind:a}': ['max<100'] },
};

export function setup() { return { token: 'abc' }; }

export default function () {
  group('api', () => {
    const res = http.get(`${__ENV.BASE}/json`);
    check(res, { 'api ok': (x) => x.status === 200 });
  });
  c.add(1); g.add(3); r.add(true); t.add(7, { kind: 'a' });
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
