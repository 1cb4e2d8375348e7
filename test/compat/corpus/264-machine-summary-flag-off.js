// --new-machine-readable-summary=false wins over the variable: the legacy
// export and handleSummary data, as without either.
// compat:env K6_NEW_MACHINE_READABLE_SUMMARY=1
// compat:args --new-machine-readable-summary=false
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(1, { one: () => true });
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
