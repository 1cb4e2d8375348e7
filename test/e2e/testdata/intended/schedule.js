// Computes jslib/intended.js's schedules for the specs in __ENV.SPECS (a
// JSON array of intendedScenario configs) and writes, from handleSummary,
// each one's arrival count and its first __ENV.N offsets in nanoseconds to
// __ENV.OUT.
import { Schedule } from '../../../../jslib/intended.js';

export const options = { iterations: 1 };

export default function () {}

export function handleSummary() {
  const n = Number(__ENV.N);
  const out = JSON.parse(__ENV.SPECS).map((cfg) => {
    const s = new Schedule(cfg);
    const offsets = [];
    for (let i = 0; i < Math.min(n, s.count); i++) {
      offsets.push(s.offsetNs(i));
    }
    return { count: s.count, offsets };
  });
  return { [__ENV.OUT]: JSON.stringify(out) };
}
