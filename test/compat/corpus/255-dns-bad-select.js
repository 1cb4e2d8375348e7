// Issue 37 item 8: a dns select k6 does not know ('First': k6's names are
// case-sensitive) is refused before the test starts, exit 104.
export const options = { iterations: 1, dns: { select: 'First' } };
export default function () {}
