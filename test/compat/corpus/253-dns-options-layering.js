// Issue 37 item 8: the dns option is layered field by field, as in k6
// v2.2.0: the script sets ttl and policy, K6_DNS select and policy, and
// --dns ttl; exec.test.options shows the result, fields no tier set as
// null, and localIPs as written.
// compat:env K6_DNS=select=roundRobin,policy=any K6_LOCAL_IPS=127.0.0.2-127.0.0.4
// compat:args --dns ttl=inf
import exec from 'k6/execution';
import { check } from 'k6';

export const options = { iterations: 1, dns: { ttl: '1m', policy: 'onlyIPv6' } };

export default function () {
  const o = exec.test.options;
  check(o, { [`dns ${JSON.stringify(o.dns)} localIPs ${o.localIPs}`]: () => true });
}
