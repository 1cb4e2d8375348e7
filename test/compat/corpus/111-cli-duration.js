// -u 2 -d 1s: a constant-vus default scenario.
// compat:args -u 2 -d 1s
import { sleep } from 'k6';

export default function () {
  sleep(0.25);
}
