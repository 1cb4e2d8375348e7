// --new-machine-readable-summary (k6 v1.5+, grafana/k6#4803): the export
// and handleSummary's data are k6's versioned summary (version 1.0.0):
// config, metadata, results {checks {metrics, results}, metrics} — no
// thresholds, groups or scenarios. Checks are listed by name, a name used
// in several groups (and in setup) counted once; custom metrics of the
// four types with their values by type (a counter's count, a gauge's
// max/min/value, a rate's matches/rate/total, a trend's six stats); a
// submetric a threshold names; a failed threshold still exits 99.
// compat:args --new-machine-readable-summary
import { check, group } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

const counter = new Counter('my_counter');
const gauge = new Gauge('my_gauge');
const rate = new Rate('my_rate');
const trend = new Trend('my_trend');
const timed = new Trend('my_time', true);

export const options = {
  iterations: 4,
  thresholds: {
    my_counter: ['count>1'],
    my_trend: ['p(95)<1'],
    'my_rate{kind:odd}': [],
    checks: ['rate>0.1'],
  },
};

export function setup() {
  check(1, { 'same name': () => true });
}

export default function () {
  const i = __ITER;
  counter.add(2);
  gauge.add(i * 3);
  rate.add(i % 2, { kind: i % 2 ? 'odd' : 'even' });
  trend.add(i * 10);
  timed.add(5);
  check(i, { 'first': () => true, 'fails': () => false });
  group('outer', () => {
    check(i, { 'same name': () => i > 0 });
    group('inner', () => {
      check(i, { 'same name': () => true, 'inner only': () => i % 2 === 0 });
    });
  });
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
