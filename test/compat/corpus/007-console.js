// console methods in init, setup, iterations and teardown run and do not
// change the results.
import { check } from 'k6';

console.log('init', 1, { a: 2 });

export const options = { iterations: 2 };

export function setup() {
  console.info('setup');
  return { ok: true };
}

export default function (data) {
  console.warn('iteration', __ITER);
  console.error('an error line', [1, 2]);
  console.debug('debug is hidden by default');
  check(data, { 'setup data arrives': (d) => d.ok === true });
}

export function teardown() {
  console.log('teardown');
}
