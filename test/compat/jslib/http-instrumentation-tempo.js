// jslib.k6.io/http-instrumentation-tempo: the trace headers of both
// propagators (random ids, so their shape), a bad propagator, and the
// instrumented k6/http, seen by the loopback server.
import http from 'k6/http';
import * as lib from '{{BASE}}/index.js';

function probe() {
  return { names: names(lib), defaultNames: names(lib.default), badPropagator: attempt(() => new lib.Client({ propagator: 'nope' })) };
}

function shape(res) {
  const h = res.json().headers;
  return [h.Traceparent ? /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/.test(h.Traceparent) : 'none',
    h['Uber-Trace-Id'] ? /^[0-9a-f]{16,32}:[0-9a-f]{8,16}:0:[01]$/.test(h['Uber-Trace-Id']) : 'none', h['X-Own'] || 'none'];
}

function probeIteration() {
  const out = {};
  out.w3c = attempt(() => shape(new lib.Client({ propagator: 'w3c' }).get(`${__ENV.ECHO}/echo`, { headers: { 'X-Own': 'kept' } })));
  out.jaeger = attempt(() => shape(new lib.Client({ propagator: 'jaeger', sampling: 1 }).post(`${__ENV.ECHO}/echo`, 'b')));
  out.instrument = attempt(() => { lib.instrumentHTTP({ propagator: 'w3c' }); return shape(http.get(`${__ENV.ECHO}/echo`)); });
  return out;
}
