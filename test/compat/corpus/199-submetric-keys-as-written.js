// Issue 25: a submetric keeps its key exactly as written in
// options.thresholds, in handleSummary's data, the summary and
// --summary-export: a handleSummary that looks it up finds it.
import { Counter } from 'k6/metrics';

const c = new Counter('my_counter');

export const options = {
  iterations: 1,
  thresholds: {
    'my_counter{a:1, b:2}': ['count>0'],
    'my_counter{"c":"3"}': ['count==2'],
    "my_counter{d:'x y'}": ['count>=0'],
  },
};

export default function () {
  c.add(1, { a: '1', b: '2' });
  c.add(2, { c: '3' });
  c.add(4, { d: 'x y' });
}

export function handleSummary(data) {
  const found = ['my_counter{a:1, b:2}', 'my_counter{"c":"3"}', "my_counter{d:'x y'}"]
    .map((k) => (data.metrics[k] ? data.metrics[k].values.count : 'undefined'));
  data.lookups = found;
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
