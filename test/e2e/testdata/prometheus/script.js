// Runs in metronome and in real k6 alike: the requests, tags, groups,
// errors, redirects, batches, drops and interruptions whose series
// prometheus_test.go compares. TARGET is the test's loopback server.
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';

const T = __ENV.TARGET;
const orders = new Counter('orders');
const basket = new Trend('basket_size');

export const options = {
  scenarios: {
    // An open model with think time, named and unnamed requests, a
    // group, an error status, a redirect, a batch and a refused connection.
    shop: {
      executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '6s',
      preAllocatedVUs: 20, maxVUs: 20, exec: 'shop', tags: { team: 'web' },
    },
    // One VU for 20 arrivals a second of 1.5 s requests: the arrivals
    // while it is busy are dropped, and the third request (sent at about
    // 3 s) is cut off by the hard stop at 4 s.
    starved: {
      executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '4s',
      preAllocatedVUs: 1, maxVUs: 1, gracefulStop: '0s', exec: 'starved', tags: { team: 'batch' },
    },
    // A closed model whose every 40th request is slow: back-filled.
    search: { executor: 'constant-vus', vus: 2, duration: '6s', exec: 'search' },
  },
};

export function shop() {
  const res = http.get(`${T}/delay/5`, { tags: { name: 'login', kind: 'auth' } });
  check(res, { 'logged in': (r) => r.status === 200 });
  group('cart', () => {
    http.get(`${T}/status/503`, { tags: { name: 'cart' } });
    http.get(`${T}/redirect`);
    http.batch([
      ['GET', `${T}/delay/2`, null, { tags: { name: 'prices' } }],
      ['GET', `${T}/?page=${exec.scenario.iterationInTest % 2}`],
    ]);
  });
  orders.add(1, { kind: 'web' });
  basket.add(3);
  if (exec.scenario.iterationInTest === 0) {
    http.get('http://127.0.0.1:1/closed', { tags: { name: 'refused' } });
  }
  sleep(0.05);
}

export function starved() {
  http.get(`${T}/delay/1500`, { tags: { name: 'slow' } });
}

export function search() {
  const slow = exec.scenario.iterationInTest % 40 === 39;
  http.post(`${T}/delay/${slow ? 300 : 3}`, 'q=metronome', { tags: { name: 'search' } });
  sleep(0.01);
}
