// One arrival that sends requests for the same URLs more than once,
// changing one thing at a time that a request's tags follow from, so that
// intended.js's tags kept per URL are reused where they apply and only
// there: TARGET (plain HTTP) answers / with 200, /missing with 404 and
// /flip with 200 and 201 in turn; TLS_TARGET is HTTPS, over TLS 1.3 and
// 1.2 in turn. SYSTEM_TAGS, when set, is the comma-separated systemTags
// option.
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

const T = __ENV.TARGET;

export const options = {
  scenarios: { shapes: intendedScenario({ rate: 1, duration: '1s', vus: 1 }) },
  insecureSkipTLSVerify: true,
};
if (__ENV.SYSTEM_TAGS) {
  options.systemTags = __ENV.SYSTEM_TAGS.split(',');
}

export default wrap(function () {
  for (let i = 0; i < 2; i++) {
    http.get(`${T}/`);
    http.post(`${T}/`, 'body');
    http.request('PUT', `${T}/`, 'body');
    http.get(`${T}/`, { headers: { 'X-Plain': 'yes' } });
    http.get(`${T}/`, { tags: { mine: 'm' } });
    http.get(http.url`${T}/`);
    http.get(`${T}/flip`);
    http.get(`${T}/missing`);
    http.get(`${T}/missing`, { responseCallback: http.expectedStatuses(404) });
    http.get(`${__ENV.TLS_TARGET}/`);
    http.batch([`${T}/`, ['POST', `${T}/`, 'body']]);
  }
  http.setResponseCallback(http.expectedStatuses(200, 404));
  http.get(`${T}/missing`);
  http.setResponseCallback(http.expectedStatuses(201));
  http.get(`${T}/`);
  http.setResponseCallback(http.expectedStatuses({ min: 200, max: 399 }));
  http.get(`${T}/missing`);
  http.get(`${T}/`);
});
