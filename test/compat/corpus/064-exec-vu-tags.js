// exec.vu.tags set in an iteration go on the VU's later samples.
import exec from 'k6/execution';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  exec.vu.tags.step = `s${__ITER}`;
  http.get(`${__ENV.BASE}/`);
  check(null, { [`tag read back ${exec.vu.tags.step}`]: () => true });
}
