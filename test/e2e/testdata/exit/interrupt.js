// A long run that the test interrupts with SIGINT.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '20s' } },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.01);
}

export function teardown() {
  console.log('TEARDOWN-RAN');
}
