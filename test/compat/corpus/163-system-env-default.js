// Without --include-system-env-vars, is the environment in __ENV?
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(__ENV, { [`HOME in __ENV: ${__ENV.HOME !== undefined}`]: () => true });
}
