// Metrics added in setup and teardown are counted too.
import { Counter } from 'k6/metrics';

const c = new Counter('lifecycle_adds');

export const options = { iterations: 2 };

export function setup() { c.add(10, { phase: 'setup' }); }
export default function () { c.add(1); }
export function teardown() { c.add(100, { phase: 'teardown' }); }
