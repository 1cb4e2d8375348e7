// -s stages make a ramping-vus default scenario.
// compat:args -s 500ms:2 -s 500ms:0
import { sleep } from 'k6';

export default function () {
  sleep(0.25);
}
