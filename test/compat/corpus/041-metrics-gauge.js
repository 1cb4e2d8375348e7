// A custom Gauge keeps the last value, min and max.
import { Gauge } from 'k6/metrics';

const g = new Gauge('queue_depth');

export const options = { iterations: 4 };

export default function () {
  g.add([5, 1, 9, 3][__ITER]);
}
