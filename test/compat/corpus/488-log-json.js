// --log-format=json: a failed request's warning with error as a key
// beside level and msg, and an iteration's exception with its fields.
// compat:args --log-format=json
// compat:log
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get('http://127.0.0.1:1/refused');
  http.get('ftp://127.0.0.1:1/file');
  throw new Error('after the requests');
}
