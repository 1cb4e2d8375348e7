// teardown() sleeps for 5 s; one signal lets it finish, two stop it.
import { sleep } from 'k6';

export const options = { vus: 1, iterations: 1 };

export default function () {}

export function teardown() {
  console.log('TEARDOWN-START');
  sleep(5);
  console.log('TEARDOWN-END');
}
