// --http-debug=full prints requests and responses; results are unchanged.
// compat:args --http-debug=full
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.post(`${__ENV.BASE}/echo`, 'debug me');
}
