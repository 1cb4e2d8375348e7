// exec.test.fail() marks the run failed (exit 110) but lets it finish.
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

const after = new Counter('after_fail');

export const options = { iterations: 3 };

export default function () {
  if (__ITER === 0) {
    exec.test.fail('marked');
  }
  after.add(1);
}
