// A custom Rate counts non-zero values as passes.
import { Rate } from 'k6/metrics';

const r = new Rate('success_rate');

export const options = { iterations: 5 };

export default function () {
  r.add(__ITER % 2 === 0);
  r.add(0);
  r.add(3, { kind: 'number' });
}
