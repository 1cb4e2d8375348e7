// About 1.5 s of requests from 2 VUs, so that the run is still going when
// the reader of its standard output goes away.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '1500ms' } },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.05);
}
