// console.log of what k6/http gives back: a response's fields, its keys
// in k6's order, and parts of res.json(), in k6's notation. (k6 writes the keys of an object that
// res.json() made in a random order, metronome in the body's order, so
// only arrays and values are logged.)
// compat:console
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE}/json`);
  console.log('fields', { status: res.status, body: res.body, error: res.error, code: res.error_code });
  console.log('json', res.json('items.#.tag'), res.json('nested.flag'), res.json().items.length, res.json('count'));
  console.log('headers', res.headers['Content-Type'], res.request.method);
  console.log('keys', Object.keys(res), { ...res, remote_port: 0, timings: 0, headers: 0, request: 0 });
}
