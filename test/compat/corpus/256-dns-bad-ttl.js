// Issue 37 item 8: a dns ttl that is not inf, 0 or a duration is refused
// before the test starts ("invalid DNS TTL: 5 minutes"). k6 v2.2.0 exits
// 255 (it checks the ttl later than the other options); metronome exits
// 104, as for every bad option value.
export const options = { iterations: 1, dns: { ttl: '5 minutes' } };
export default function () {}
