// options.discardResponseBodies: bodies are null unless a request asks
// for text.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, discardResponseBodies: true };

export default function () {
  check(http.get(`${__ENV.BASE}/json`), { 'discarded': (r) => r.body === null });
  check(http.get(`${__ENV.BASE}/json`, { responseType: 'text' }), { 'text on request': (r) => r.json('count') === 3 });
}
