// A capacity search against TARGET: the options come from the
// environment so that the tests can size it to what they measured.
// BURN, when set, is milliseconds of CPU each iteration spends before its
// request: work of the generator's own, for the test that starves it.
import http from 'k6/http';

const env = (name, def) => __ENV[name] || def;

export const options = {
  scenarios: {
    search: {
      executor: 'capacity-search',
      startRate: Number(env('START', 100)),
      maxRate: Number(env('MAX', 3000)),
      growth: Number(env('GROWTH', 2)),
      stepDuration: env('STEP', '5s'),
      gracefulStop: '1s',
      objective: env('OBJECTIVE', 'p(90)<250'),
      preAllocatedVUs: Number(env('PRE', 50)),
      maxVUs: Number(env('MAXVUS', 600)),
    },
  },
};

export default function () {
  const burn = Number(env('BURN', 0));
  if (burn > 0) {
    const end = Date.now() + burn;
    while (Date.now() < end) {
      // the generator's own work
    }
  }
  http.get(__ENV.TARGET);
}
