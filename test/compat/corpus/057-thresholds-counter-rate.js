// Counter thresholds on count and rate, Gauge on value, Rate on rate.
import { Counter, Gauge } from 'k6/metrics';

const c = new Counter('events');
const g = new Gauge('level');

export const options = {
  iterations: 4,
  thresholds: { events: ['count==8', 'rate>0'], level: ['value==4'], checks: ['rate>=0'] },
};

export default function () {
  c.add(2);
  g.add(__ITER + 1);
}
