// setup() sleeps for 20 s: a signal must stop it.
import { sleep } from 'k6';

export const options = { vus: 1, iterations: 1 };

export function setup() {
  console.log('SETUP-START');
  sleep(20);
}

export default function () { console.log('DEFAULT-RAN'); }
export function teardown() { console.log('TEARDOWN-RAN'); }
