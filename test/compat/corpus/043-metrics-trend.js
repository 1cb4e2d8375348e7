// Custom Trends: a plain one with exact stats and a time one.
import { Trend } from 'k6/metrics';

const plain = new Trend('payload_size');
const waits = new Trend('wait_time', true);

export const options = { iterations: 10 };

export default function () {
  plain.add(__ITER * 10 + 5);
  plain.add(-2.5, { side: 'negative' });
  waits.add(1 + __ITER);
}
