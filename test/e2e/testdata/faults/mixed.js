// Every iteration sends one request to each misbehaving server: a run's
// accounting must stay whole however its requests fail.
import http from 'k6/http';

export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 15 } },
};

const names = ['OK', 'CUT', 'RESET', 'REFUSE', 'BLACKHOLE', 'GARBAGE', 'CHUNKED'];

export default function () {
  for (const n of names) {
    http.get(__ENV[n], { timeout: '200ms' });
  }
}
