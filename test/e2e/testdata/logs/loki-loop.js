// Logs a line every 100 ms for a minute, after telling the stand-in Loki
// (__ENV.STAND_IN) that the test started.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = { vus: 1, duration: '60s' };

export function setup() {
  http.get(`${__ENV.STAND_IN}/started`);
}

export default function () {
  console.log('tick');
  sleep(0.1);
}
