// Declaring a metric outside the init context fails the iteration, not
// the test.
import { Counter } from 'k6/metrics';

export const options = { iterations: 1 };

export default function () {
  new Counter('too_late');
}
