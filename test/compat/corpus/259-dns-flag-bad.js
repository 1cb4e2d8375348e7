// Issue 37 item 8: --dns with a policy k6 does not know is refused
// before the test starts. k6 v2.2.0 exits 255, as for every bad flag
// value; metronome exits 104, as for every bad flag value.
// compat:args --dns policy=ipv4
export default function () {}
