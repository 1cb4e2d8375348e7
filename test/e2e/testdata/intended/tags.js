// One arrival that sends, through intended.js's http, a request of every
// form k6/http has, to TARGET (plain HTTP: /, /redirect to /?redirected, /missing
// answers 404) and TLS_TARGET (HTTPS). Each request's tags are unique, so
// that its corrected_latency pairs with its http_req_duration.
// SYSTEM_TAGS, when set, is the comma-separated systemTags option.
import exec from 'k6/execution';
import { group } from 'k6';
import http, { intendedScenario, wrap, get, post } from '../../../../jslib/intended.js';

const T = __ENV.TARGET;

export const options = {
  scenarios: { tags: intendedScenario({ rate: 1, duration: '1s', vus: 1 }) },
  tags: { testwide: 'yes' },
  insecureSkipTLSVerify: true,
};
if (__ENV.SYSTEM_TAGS) {
  options.systemTags = __ENV.SYSTEM_TAGS.split(',');
}

const only2xx = http.expectedStatuses({ min: 200, max: 299 });

export default wrap(function () {
  exec.vu.tags.vutag = 'v';
  http.get(`${T}/`);
  get(`${T}/?named`, { tags: { name: 'named', mine: 'm' } });
  http.get(http.url`${T}/item/${1}`);
  post(`${T}/?post`, 'body');
  http.put(`${T}/?put`, 'body');
  http.patch(`${T}/?patch`, 'body');
  http.del(`${T}/?del`);
  http.options(`${T}/?options`);
  http.head(`${T}/?head`);
  http.request('GET', `${T}/?request`);
  http.get(`${T}/redirect`);
  http.get(`${T}/missing`);
  http.get(`${T}/missing?2xx`, { responseCallback: only2xx });
  http.get(`${T}/missing?none`, { responseCallback: null });
  http.get('http://127.0.0.1:1/refused');
  http.get('::not a url');
  group('batch', () => {
    http.batch([`${T}/?b0`, ['POST', `${T}/?b1`, 'body', { tags: { name: 'b1' } }], { method: 'GET', url: `${T}/?b2` }]);
    http.batch({ b3: `${T}/?b3`, b4: { url: `${T}/?b4`, params: { tags: { b: '4' } } } });
  });
  http.get(`${__ENV.TLS_TARGET}/?tls`);
  http.setResponseCallback(http.expectedStatuses(200, 404));
  http.get(`${T}/missing?client`);
  http.setResponseCallback(http.expectedStatuses({ min: 200, max: 399 }));
  return http.asyncRequest('GET', `${T}/?async`, null, { tags: { name: 'async' } });
});
