// Crossed thresholds: exit 99 after the full run.
import { Counter, Trend } from 'k6/metrics';

const c = new Counter('things');
const t = new Trend('sizes');

export const options = {
  iterations: 3,
  thresholds: { things: ['count<2', 'count>0'], sizes: ['p(50)<10', 'max<100'] },
};

export default function () {
  c.add(1);
  t.add(50);
}
