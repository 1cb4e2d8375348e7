// Every kind of sample a k6 output writes: HTTP requests in a group, a
// check, one custom metric of each type, and an arrival-rate scenario,
// whose iterations have an intended time (metronome adds
// corrected_latency and schedule_lag). 10 iterations over 2 s.
import http from 'k6/http';
import { check, group } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

const myCounter = new Counter('my_counter');
const myGauge = new Gauge('my_gauge');
const myRate = new Rate('my_rate');
const myTrend = new Trend('my_trend', true);

export const options = {
  scenarios: {
    paced: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '1s', duration: '2s', preAllocatedVUs: 2 },
  },
};

export default function () {
  group('g1', () => {
    const res = http.get(`${__ENV.TARGET}/target`, { tags: { kind: 'api' } });
    check(res, { 'status is 200': (r) => r.status === 200 });
  });
  myCounter.add(1, { flavour: 'x' });
  myGauge.add(3);
  myRate.add(true);
  myTrend.add(12.5);
}
