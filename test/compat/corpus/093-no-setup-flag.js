// --no-setup and --no-teardown skip them; iterations get undefined data.
// compat:args --no-setup --no-teardown
import { check } from 'k6';
import { Counter } from 'k6/metrics';

const ran = new Counter('lifecycle_ran');

export const options = { iterations: 2 };

export function setup() { ran.add(1, { fn: 'setup' }); return { x: 1 }; }

export default function (data) {
  check(data, { 'no setup data': (d) => d === undefined });
}

export function teardown() { ran.add(1, { fn: 'teardown' }); }
