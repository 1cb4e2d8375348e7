// constant-vus: 2 VUs for 1 s, iterations of ~250 ms each.
import { sleep } from 'k6';

export const options = { scenarios: { cv: { executor: 'constant-vus', vus: 2, duration: '1s' } } };

export default function () {
  sleep(0.25);
}
