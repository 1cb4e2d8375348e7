// Issue 37, bug 3: HTTP requests cut off by the hard stop. k6 v2.2.0
// keeps every request answered before the stop (the first hop of a
// redirect, the fast request of a batch, an asyncRequest answered while
// the VU slept) and nothing of the ones cut off, nor the check, the custom
// metric and the group duration recorded after the stop; no iteration
// counts.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { Counter } from 'k6/metrics';

const after = new Counter('after_stop');

export const options = {
  scenarios: { cut: { executor: 'per-vu-iterations', vus: 5, iterations: 1, maxDuration: '1s', gracefulStop: '0s' } },
};

const slow = `${__ENV.BASE}/slow?ms=4000`;

export default async function () {
  switch (__VU) {
    case 1:
      http.get(`${__ENV.BASE}/json`, { tags: { name: 'before' } });
      group('cut', () => {
        const r = http.get(slow, { tags: { name: 'sync-cut' } });
        check(r, { 'after the stop': (x) => x.status === 200 });
        after.add(1);
      });
      after.add(1);
      break;
    case 2:
      http.batch([
        ['GET', `${__ENV.BASE}/json`, null, { tags: { name: 'batch-fast' } }],
        ['GET', slow, null, { tags: { name: 'batch-cut' } }],
      ]);
      after.add(1);
      break;
    case 3:
      http.get(`${__ENV.BASE}/redirect-to?url=${encodeURIComponent(slow)}`, { tags: { name: 'redirect' } });
      after.add(1);
      break;
    case 4:
      http.asyncRequest('GET', `${__ENV.BASE}/json`, null, { tags: { name: 'async-answered' } });
      http.asyncRequest('GET', slow, null, { tags: { name: 'async-cut' } });
      sleep(3);
      after.add(1);
      break;
    case 5: {
      const r = await http.asyncRequest('GET', slow, null, { tags: { name: 'await-cut' } });
      check(r, { 'after the await': (x) => x.status === 200 });
      after.add(1);
      break;
    }
  }
}
