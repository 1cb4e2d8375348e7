// Issue 37 item 8: k6 v2.2.0 takes --dns with exactly its default text
// (ttl=5m,select=random,policy=preferIPv4) as setting nothing, so the
// script's dns fields stay, and fields no tier set are null.
// compat:args --dns ttl=5m,select=random,policy=preferIPv4
import exec from 'k6/execution';
import { check } from 'k6';

export const options = { iterations: 1, dns: { ttl: '1m', select: 'first' } };

export default function () {
  check(exec.test.options, { [`dns ${JSON.stringify(exec.test.options.dns)}`]: () => true });
}
