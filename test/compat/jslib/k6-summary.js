// jslib.k6.io/k6-summary: textSummary (with and without colours), jUnit
// and humanizeValue on fixed summary data, so the text is the same in
// every run.
import * as lib from '{{BASE}}/index.js';

const data = {
  root_group: {
    name: '', path: '', id: 'd41d8cd98f00b204e9800998ecf8427e', groups: [
      { name: 'login', path: '::login', id: 'g1', groups: [], checks: [{ name: 'status 200', path: '::login::status 200', id: 'c1', passes: 3, fails: 1 }] },
    ],
    checks: [{ name: 'body ok', path: '::body ok', id: 'c2', passes: 4, fails: 0 }],
  },
  options: { summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'count'], summaryTimeUnit: '', noColor: true },
  state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: 12345.678 },
  metrics: {
    checks: { type: 'rate', contains: 'default', values: { rate: 0.875, passes: 7, fails: 1 }, thresholds: { 'rate>0.9': { ok: false } } },
    data_received: { type: 'counter', contains: 'data', values: { count: 123456, rate: 10000.5 } },
    http_req_duration: {
      type: 'trend', contains: 'time',
      values: { avg: 12.3456, min: 0.5, med: 10, max: 1500.25, 'p(90)': 40.5, 'p(95)': 45.25, count: 8 },
      thresholds: { 'p(95)<100': { ok: true } },
    },
     'http_req_duration{expected_response:true}': {
      type: 'trend', contains: 'time', values: { avg: 11, min: 0.5, med: 9, max: 20, 'p(90)': 18, 'p(95)': 19, count: 7 },
    },
    http_reqs: { type: 'counter', contains: 'default', values: { count: 8, rate: 0.648 } },
    vus: { type: 'gauge', contains: 'default', values: { value: 2, min: 1, max: 5 } },
    my_trend: { type: 'trend', contains: 'default', values: { avg: 2.5, min: 1, med: 2.5, max: 4, 'p(90)': 3.7, 'p(95)': 3.85, count: 4 } },
  },
};

function probe() {
  return {
    names: names(lib),
    text: lib.textSummary(data, { indent: ' ', enableColors: false }),
    colored: attempt(() => lib.textSummary(data, { indent: '  ', enableColors: true })),
    junit: attempt(() => lib.jUnit(data)),
    junitNamed: attempt(() => lib.jUnit(data, { name: 'suite', classname: 'cls' })),
    humanize: [
      lib.humanizeValue(1234.5678, data.metrics.http_req_duration, ''),
      lib.humanizeValue(1234.5678, data.metrics.http_req_duration, 'ms'),
      lib.humanizeValue(0.0123, data.metrics.http_req_duration, ''),
      lib.humanizeValue(123456, data.metrics.data_received, ''),
      lib.humanizeValue(0.875, data.metrics.checks, ''),
      lib.humanizeValue(42, data.metrics.vus, ''),
    ],
  };
}
