// The fields of --http-debug lines as k6 writes them: in setup and
// teardown vu=0 and no scenario; run tags (--tag), exec.vu.tags and
// exec.vu.metrics.metadata; the name of an http.url request, and the one
// params.tags gives; a tag named vu hidden by the VU's number. A URL of a
// scheme no client sends has an error line and an empty "Request:" dump.
// compat:args --http-debug --tag runtag=r
// compat:log source=http-debug
import http from 'k6/http';
import exec from 'k6/execution';

export const options = { iterations: 1, userAgent: 'compat-debug' };

const params = { headers: { 'Accept-Encoding': 'identity' } };

export function setup() {
  http.get(`${__ENV.BASE}/?setup`, params);
}

export default function () {
  http.get(http.url`${__ENV.BASE}/?id=${1}`, params);
  http.get(`${__ENV.BASE}/?named`, { headers: params.headers, tags: { name: 'mine', vu: 'tagvu' } });
  exec.vu.metrics.tags.vutag = 'yes';
  exec.vu.metrics.metadata.trace_id = 'abc';
  http.get(`${__ENV.BASE}/?meta`, params);
  http.head(`${__ENV.BASE}/`);
  http.get('ftp://127.0.0.1:1/x', params);
}

export function teardown() {
  http.get(`${__ENV.BASE}/?teardown`, params);
}
