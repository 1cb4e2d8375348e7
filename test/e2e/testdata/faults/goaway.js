// One request per iteration against a server that goes away mid-run.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '2s' } },
};

export default function () {
  http.get(__ENV.TARGET);
  sleep(0.02);
}
