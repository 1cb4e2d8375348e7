// HTTP requests in the init context are not allowed (107).
import http from 'k6/http';

const r = http.get(`${__ENV.BASE}/`);

export default function () {}
