// exec.test.abort() in setup: no iterations run, exit 108.
import exec from 'k6/execution';

export const options = { iterations: 3 };

export function setup() {
  exec.test.abort('no data');
}

export default function () {}
