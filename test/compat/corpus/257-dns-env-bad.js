// Issue 37 item 8: K6_DNS with a field k6 does not know is refused, exit
// 104 in both.
// compat:env K6_DNS=ttl=1m,selection=first
export default function () {}
