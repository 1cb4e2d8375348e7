// --summary-mode=full keeps the HTTP timing parts in the machine-readable
// metrics (only checks and group_duration are left out), and its groups
// and scenarios add nothing to it: the format has the whole run only.
// compat:args --new-machine-readable-summary --summary-mode=full
import http from 'k6/http';
import { check, group } from 'k6';

export const options = {
  scenarios: {
    one: { executor: 'shared-iterations', vus: 1, iterations: 2 },
    two: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'other' },
  },
};

export default function () {
  group('api', () => {
    const r = http.get(`${__ENV.BASE}/json`);
    check(r, { ok: (res) => res.status === 200 });
  });
}

export function other() {
  check(null, { ok: () => false });
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
