// K6_NEW_MACHINE_READABLE_SUMMARY=true does what the flag does. A run with
// no check has a checks section of two empty lists; handleSummary gets
// the same object the export holds.
// compat:env K6_NEW_MACHINE_READABLE_SUMMARY=true
export const options = { iterations: 2 };

export default function () {}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify(data) };
}
