// jslib.k6.io/httpx: a session with a base URL, headers and tags against
// the loopback server: get, post of a form and JSON, the request objects,
// batch, an invalid method; what the server saw and the samples' tags
// show up in the answers and the run's checks.
import http from 'k6/http';
import { Rate } from 'k6/metrics';
import * as lib from '{{BASE}}/index.js';

const errors = new Rate('httpx_errors');

function seen(res) {
  const j = res.json();
  return [res.status, j.method, j.path, j.headers['X-Session'], j.headers['X-Request'], j.body, j.content_type];
}

function probe() {
  return { names: names(lib) };
}

function probeIteration() {
  const session = new lib.Httpx({ baseURL: __ENV.ECHO, headers: { 'X-Session': 's1' }, tags: { lib: 'httpx' }, timeout: 5000, errorMetric: errors });
  const out = {};
  out.get = seen(session.get('/echo', null, { headers: { 'X-Request': 'r1' } }));
  out.postForm = seen(session.post('/echo', { a: '1', b: 'two' }));
  out.postJSON = seen(session.post('/echo', JSON.stringify({ k: 'v' }), { headers: { 'Content-Type': 'application/json' } }));
  session.addHeader('X-Request', 'added');
  out.added = seen(session.put('/echo', 'raw'));
  if (session.clearHeader) {
    session.clearHeader('X-Request');
    out.cleared = seen(session.patch('/echo', 'p'));
  }
  out.status = session.get('/status/404').status;
  out.badMethod = attempt(() => session.request('BREW', '/echo').status);
  out.tooFew = attempt(() => typeof session.request('GET'));
  out.request = attempt(() => seen(session.request(new lib.Get('/echo', { headers: { 'X-Request': 'obj' } }).method,
    '/echo', null, new lib.Get('/echo', { headers: { 'X-Request': 'obj' } }).params)));
  out.requestObject = attempt(() => { const r = new lib.Post('/echo', { body: 'b' }).addHeader('X-Request', 'h').addTag('t', 'v'); return [r.method, r.url, r.body, r.params]; });
  if (session.batch) {
    out.batch = attempt(() => session.batch([new lib.Get('/echo'), new lib.Post('/echo', { body: 'x' })]).map(seen));
  }
  out.chainDuration = typeof session.lastRequestChainDuration;
  return out;
}
