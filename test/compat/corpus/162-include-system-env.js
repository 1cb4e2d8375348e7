// --include-system-env-vars puts the process environment in __ENV.
// compat:args --include-system-env-vars
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(__ENV, { [`HOME in __ENV: ${__ENV.HOME !== undefined}`]: () => true });
}
