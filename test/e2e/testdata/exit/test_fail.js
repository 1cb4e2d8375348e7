// Marks the test failed and carries on: every iteration still runs, exit 110.
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

const after = new Counter('after_fail');

export const options = { iterations: 4 };

export default function () {
  exec.test.fail('marked as failed');
  after.add(1);
}
