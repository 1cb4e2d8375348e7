// options.throw: a failed request throws instead of returning status 0.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, throw: true };

export default function () {
  let threw = false;
  try {
    http.get('http://127.0.0.1:1/');
  } catch (e) {
    threw = true;
  }
  check(threw, { 'request error thrown': (x) => x === true });
}
