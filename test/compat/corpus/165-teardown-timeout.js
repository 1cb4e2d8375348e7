// teardownTimeout: a teardown slower than it ends the run with exit 101.
import { sleep } from 'k6';

export const options = { iterations: 1, teardownTimeout: '1s' };

export default function () {}

export function teardown() {
  sleep(3);
}
