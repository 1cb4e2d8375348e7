// 1,000 arrivals a second for 5 s, each a GET of one of 1,000 URLs in
// turn: every second, every URL's HTTP series (about ten: the request's
// timings, http_reqs, http_req_failed) get values, more than the result
// output's 10,000-series cap holds.
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    cap: { executor: 'constant-arrival-rate', rate: 1000, timeUnit: '1s', duration: '5s', preAllocatedVUs: 60, maxVUs: 200 },
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/item/${exec.scenario.iterationInTest % 1000}`);
}
