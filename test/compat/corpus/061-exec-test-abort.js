// exec.test.abort() ends the run at once with exit 108; teardown runs.
// k6 logs "test aborted: enough" and the frame of the call, at the program
// counter where the interrupt is noticed.
// compat:log
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

const td = new Counter('teardown_ran');

export const options = { iterations: 5 };

export default function () {
  if (__ITER === 2) {
    exec.test.abort('enough');
  }
}

export function teardown() { td.add(1); }
