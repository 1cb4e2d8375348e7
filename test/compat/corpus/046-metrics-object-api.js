// A metric object's name and type are readable; add() returns nothing.
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import { check } from 'k6';

const c = new Counter('obj_counter');
const g = new Gauge('obj_gauge');
const r = new Rate('obj_rate');
const t = new Trend('obj_trend');

export const options = { iterations: 1 };

export default function () {
  c.add(1); g.add(2); r.add(true); t.add(3);
  check(null, {
    [`names ${[c.name, g.name, r.name, t.name].join(',')}`]: () => true,
  });
}
