// An exception inside an iteration is logged; the iteration still counts
// and the run exits 0.
import { Counter } from 'k6/metrics';

const reached = new Counter('reached');

export const options = { iterations: 3 };

export default function () {
  reached.add(1);
  if (__ITER === 1) {
    throw new Error('iteration failed on purpose');
  }
  reached.add(1, { after: 'throw' });
}
