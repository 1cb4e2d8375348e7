// A capacity search: the highest arrival rate at which TARGET still
// answers 99 % of requests within 250 ms, measured from each arrival's
// intended time (corrected_latency). The rate climbs from 100/s, doubling
// while the objective holds, then bisects to within 5 %; every step is
// judged on its own, and the search says whether it found the server's
// limit or the generator's own.
//
//   metronome run -e TARGET=http://127.0.0.1:8080 examples/capacity-search.js
import http from 'k6/http';

const target = __ENV.TARGET || 'http://127.0.0.1:8080';

export const options = {
  scenarios: {
    find: {
      executor: 'capacity-search',
      startRate: 100,
      maxRate: 3000,
      timeUnit: '1s',
      stepDuration: '5s',
      objective: 'p(99)<250',
      preAllocatedVUs: 50,
      maxVUs: 600,
    },
  },
  thresholds: {
    // Fails the run (exit code 99) when the search finds less, or when the
    // generator was the limit and no rate is the server's.
    capacity_search_rate: ['value>=300'],
  },
};

export default function () {
  http.get(target);
}
