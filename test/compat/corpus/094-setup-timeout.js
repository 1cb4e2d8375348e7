// setupTimeout: a setup slower than it ends the run with exit 100.
import { sleep } from 'k6';

export const options = { iterations: 1, setupTimeout: '1s' };

export function setup() {
  sleep(3);
}

export default function () {}
