// jslib.k6.io/k6-replay (not published; it needs k6/browser): its
// exports.
import * as lib from '{{BASE}}/index.js';

function probe() {
  return { names: names(lib), metricNames: names(lib.MetricName) };
}
