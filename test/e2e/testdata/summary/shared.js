// 50 iterations shared by 5 VUs, one request each.
import http from 'k6/http';

export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 5, iterations: 50 } },
};

export default function () {
  http.get(__ENV.TARGET);
}
