// A custom Counter with and without tags.
import { Counter } from 'k6/metrics';

const items = new Counter('items_total');
const bytes = new Counter('payload_bytes', true);

export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 5 } } };

export default function () {
  items.add(1);
  items.add(2, { kind: 'bulk' });
  bytes.add(100);
}
