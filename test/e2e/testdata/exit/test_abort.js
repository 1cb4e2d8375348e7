// Aborts the test from the sixth iteration on: exit 108, long before 20 s.
import exec from 'k6/execution';
import { sleep } from 'k6';

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '20s' } },
};

export default function () {
  if (exec.scenario.iterationInTest >= 5) {
    exec.test.abort('enough of this');
  }
  sleep(0.01);
}

export function teardown() {
  console.log('TEARDOWN-RAN');
}
