// k6's HTTP engine (httpext.MakeRequest) through the probe, against the
// loopback server at __ENV.TARGET; and a k6/http jar handed to the probe.
import http from 'k6/http';
import { send, jarCookies } from 'k6/x/probe';

// One iteration of an open model, so that the requests have a
// corrected_latency.
export const options = {
  scenarios: { once: { executor: 'intended-arrival-rate', rate: 1, duration: '1s', preAllocatedVUs: 1 } },
};

export default function () {
  console.log(send('POST', __ENV.TARGET + '/push?t=1', '/push', 'payload', null, ''));
  console.log(send('POST', __ENV.TARGET + '/push?t=2', '/zip', 'payload', null, 'gzip, br, zstd, deflate'));
  console.log(send('GET', __ENV.TARGET + '/missing', '', '', null, ''));
  const jar = http.cookieJar();
  jar.set(__ENV.TARGET, 'fromjs', '2');
  console.log('vu jar', jarCookies(jar, __ENV.TARGET + '/'));
  console.log(send('GET', __ENV.TARGET + '/cookies', '/cookies', '', jar, ''));
  const own = new http.CookieJar();
  console.log('own jar', jarCookies(own, __ENV.TARGET + '/'));
  console.log('k6/http sends', http.get(__ENV.TARGET + '/cookies').body);
}
