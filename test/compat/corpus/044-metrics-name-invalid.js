// A metric name k6 does not accept is an init error.
import { Counter } from 'k6/metrics';

const bad = new Counter('bad name!');

export default function () {
  bad.add(1);
}
