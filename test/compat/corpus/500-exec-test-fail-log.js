// exec.test.fail() logs one error line per call, its reason after a colon
// when one is given (an empty one too), lets every iteration run, and the
// run ends with one more line and exit code 110, as in k6.
// compat:log
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

const after = new Counter('after_fail');

export const options = { iterations: 2 };

export function setup() { exec.test.fail(); }

export default function () {
  exec.test.fail(__ITER === 0 ? 'first' : '');
  after.add(1);
}

export function teardown() { exec.test.fail({ a: 1 }); }
