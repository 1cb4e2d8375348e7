// exec.test.abort() in setup: k6 logs "test aborted: " and the reason at
// the error level with no field, runs neither the iterations nor
// teardown, and exits 108.
// compat:log
import exec from 'k6/execution';

export const options = { iterations: 1 };

export function setup() {
  exec.test.abort('the login service is down');
}

export default function () {
  console.log('iteration ran');
}

export function teardown() {
  console.log('teardown ran');
}
