// jslib.k6.io/http-instrumentation-pyroscope: the Baggage header the
// client and the instrumented k6/http add, seen by the loopback server.
import http from 'k6/http';
import * as lib from '{{BASE}}/index.js';

function probe() {
  return { names: names(lib), defaultNames: names(lib.default) };
}

function headers(res) {
  const h = res.json().headers;
  return Object.keys(h).filter((k) => k !== 'User-Agent' && k !== 'Accept-Encoding').sort().map((k) => k + ': ' + h[k]);
}

function probeIteration() {
  const out = {};
  out.client = attempt(() => headers(new lib.Client().get(`${__ENV.ECHO}/echo`, { headers: { 'X-Own': 'kept' } })));
  out.custom = attempt(() => headers(new lib.Client(() => ({ 'X-Custom': 'c' })).post(`${__ENV.ECHO}/echo`, 'b')));
  out.instrument = attempt(() => { lib.instrumentHTTP(); return headers(http.get(`${__ENV.ECHO}/echo`)); });
  return out;
}
