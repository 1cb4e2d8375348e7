// jslib.k6.io/k6-replay (not published; it needs k6/browser, which
// metronome does not offer): its exports.
import * as lib from '{{BASE}}/index.js';

function probe() {
  return { names: names(lib), metricNames: names(lib.MetricName) };
}
