// VU 1 (made first, for the options and custom metrics) starts at once;
// VUs 2-4 busy-wait in their init context for 20 s.
export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 4, iterations: 1 } },
};

if (__VU > 1) {
  console.log('INIT-SLOW ' + __VU);
  const end = Date.now() + 20000;
  while (Date.now() < end) { /* busy */ }
}

export default function () { console.log('DEFAULT-RAN'); }
export function teardown() { console.log('TEARDOWN-RAN'); }
