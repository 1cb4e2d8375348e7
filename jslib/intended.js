// intended.js: intended-time pacing and corrected_latency for stock k6.
//
// Some teams must run the k6 binary they have. This module gives their
// scripts honest latency numbers anyway: it fixes every iteration's
// intended start time in advance, paces iterations to it, and measures from
// it, so a server stall shows in the percentiles instead of vanishing from
// them (coordinated omission). It uses only k6's public JavaScript API and
// runs unchanged in k6 and in metronome.
//
// Usage, three lines (plus an optional fourth that charges iterations that
// never ran):
//
//   import { intendedScenario, wrap } from './jslib/intended.js';
//   export const options = { scenarios: { api: intendedScenario({ rate: 100, duration: '1m', vus: 50 }) } };
//   export default wrap(function () { http.get('http://127.0.0.1:8080/'); });
//   export { teardown } from './jslib/intended.js';
//
// Metrics, with the same names and meaning as metronome's built-ins:
//   corrected_latency  end − intended start, ms (Trend, time)
//   schedule_lag       actual start − intended start, ms (Trend, time)
// Iterations that never started are charged in teardown with
// end − intended start and tagged outcome=dropped (see teardown for how
// the intended starts are recovered there, and when that is a lower bound).
//
// How it works: the scenario is k6's shared-iterations executor with one
// iteration per intended arrival, so every arrival has a global index
// (exec.scenario.iterationInTest) and therefore an intended start time
// t_i = exec.scenario.startTime + Λ⁻¹(i). Λ⁻¹ is computed with k6's own
// arrival-rate arithmetic, to the nanosecond (and tested against
// metronome's Go schedule): a constant rate repeats a period truncated to
// whole nanoseconds from t = 0, as constant-arrival-rate does; a ramp
// places arrival i where the area under the rate reaches i + 1, as
// ramping-arrival-rate does. A VU that picks up iteration i early sleeps
// until t_i; a VU that picks it up late starts at once and the delay is
// charged to the iteration.
//
// Limits, compared with metronome's intended-arrival-rate executor: the VU
// count is fixed (no VUs are added in the background when the backlog
// grows; give vus room for rate × the longest stall), the clock is
// JavaScript's millisecond Date.now() and sleep() has timer precision,
// arrivals are evenly spaced only (no Poisson), and the test should hold
// one intended scenario (teardown counts the instance's iterations).

import { sleep } from 'k6';
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';

const correctedLatency = new Trend('corrected_latency', true);
const scheduleLag = new Trend('schedule_lag', true);

const NS_PER_MS = 1e6;

const UNITS_NS = { d: 86400e9, h: 3600e9, m: 60e9, s: 1e9, ms: 1e6, us: 1e3, 'µs': 1e3, ns: 1 };

// durationNs parses a k6 duration ("1m30s", "250ms", "1d") or a number of
// milliseconds into nanoseconds.
export function durationNs(d) {
  if (typeof d === 'number') {
    return Math.trunc(d * NS_PER_MS);
  }
  const s = String(d).trim();
  if (/^\d+(\.\d+)?$/.test(s)) {
    return Math.trunc(Number(s) * NS_PER_MS);
  }
  const re = /(\d+(?:\.\d+)?)(d|h|ms|m|s|us|µs|ns)/g;
  let total = 0;
  let consumed = 0;
  let m;
  while ((m = re.exec(s)) !== null) {
    if (m.index !== consumed) {
      break;
    }
    total += Number(m[1]) * UNITS_NS[m[2]];
    consumed = re.lastIndex;
  }
  if (consumed !== s.length || s.length === 0) {
    throw new Error(`intended.js: invalid duration ${JSON.stringify(d)}`);
  }
  return Math.round(total);
}

// Schedule is the intended start offset of every arrival, in nanoseconds
// from the scenario start.
export class Schedule {
  constructor(cfg) {
    this.timeUnitNs = durationNs(cfg.timeUnit || '1s');
    if (cfg.stages) {
      this.ramp = true;
      this.startRate = Number(cfg.startRate || 0);
      this.stages = cfg.stages.map((s) => ({ durationNs: durationNs(s.duration), target: Number(s.target) }));
      this.lengthNs = this.stages.reduce((a, s) => a + s.durationNs, 0);
      this.count = this._rampCount();
    } else {
      const rate = Number(cfg.rate);
      if (!(rate > 0)) {
        throw new Error('intended.js: rate must be a number greater than 0');
      }
      this.ramp = false;
      this.periodNs = Math.trunc(this.timeUnitNs / rate);
      if (this.periodNs < 1) {
        throw new Error('intended.js: rate must not exceed one arrival per nanosecond');
      }
      this.lengthNs = durationNs(cfg.duration);
      if (!(this.lengthNs > 0)) {
        throw new Error('intended.js: duration must be longer than 0s');
      }
      // Offsets 0, P, 2P, … before the end of the duration.
      this.count = Math.floor((this.lengthNs - 1) / this.periodNs) + 1;
    }
    this._cursor = null;
  }

  _rampCount() {
    // Arrivals whose 1-based index i satisfies i <= total area, the area
    // being the integral of the rate over the stages, summed in floating
    // point as k6 does (so an area meant to be 1980 may hold 1979).
    let area = 0;
    let r0 = this.startRate / this.timeUnitNs;
    for (const st of this.stages) {
      const r1 = st.target / this.timeUnitNs;
      area += (st.durationNs * (r0 + r1)) / 2;
      r0 = r1;
    }
    return Math.floor(area);
  }

  // offsetNs returns the intended offset of 0-based arrival i.
  offsetNs(i) {
    if (!this.ramp) {
      return i * this.periodNs;
    }
    return this._rampOffset(i + 1);
  }

  // _rampOffset solves, stage by stage, r0·x + (r1−r0)·x²/(2D) = i − C for
  // the 1-based index i, C being the arrivals of earlier stages (k6's
  // ramping-arrival-rate arithmetic, in floating point). x is truncated to
  // whole nanoseconds before the stage's start is added, so that a large
  // start cannot round the sum up.
  _rampOffset(i) {
    let c = 0;
    let start = 0;
    let r0 = this.startRate / this.timeUnitNs;
    for (const st of this.stages) {
      const d = st.durationNs;
      const r1 = st.target / this.timeUnitNs;
      const area = (d * (r0 + r1)) / 2;
      if (i <= c + area) {
        let x;
        if (r0 === r1) {
          x = (i - c) / r1;
        } else {
          const rad = Math.max(d * (r0 * r0 * d + 2 * (i - c) * (r1 - r0)), 0);
          x = (r0 * d - Math.sqrt(rad)) / (r0 - r1);
        }
        return start + Math.trunc(x);
      }
      c += area;
      r0 = r1;
      start += d;
    }
    return -1;
  }
}

// intendedScenario returns a k6 scenario that runs one iteration per
// intended arrival. cfg: rate, timeUnit ('1s'), duration — or startRate and
// stages — and vus (the concurrency ceiling), plus optional grace (time
// after the schedule for late iterations, '30s'), exec, tags, env,
// startTime and gracefulStop.
export function intendedScenario(cfg) {
  const sched = new Schedule(cfg);
  if (sched.count < 1) {
    throw new Error('intended.js: the schedule holds no arrivals; raise the rate or lengthen the duration');
  }
  const vus = Number(cfg.vus || 1);
  const graceNs = durationNs(cfg.grace || '30s');
  const sc = {
    executor: 'shared-iterations',
    vus: Math.min(vus, sched.count),
    iterations: sched.count,
    maxDuration: `${Math.ceil((sched.lengthNs + graceNs) / 1e6)}ms`,
    env: Object.assign({}, cfg.env || {}, { INTENDED_SCHEDULE: JSON.stringify(scheduleConfig(cfg)) }),
  };
  for (const k of ['exec', 'tags', 'startTime', 'gracefulStop']) {
    if (cfg[k] !== undefined) {
      sc[k] = cfg[k];
    }
  }
  return sc;
}

function scheduleConfig(cfg) {
  const out = { timeUnit: cfg.timeUnit || '1s' };
  if (cfg.stages) {
    out.startRate = cfg.startRate || 0;
    out.stages = cfg.stages;
  } else {
    out.rate = cfg.rate;
    out.duration = cfg.duration;
  }
  return out;
}

// Each VU parses its scenario's schedule once.
const schedules = {};

function scheduleFor(env) {
  const raw = env.INTENDED_SCHEDULE;
  if (!raw) {
    throw new Error('intended.js: wrap() runs outside a scenario made by intendedScenario()');
  }
  if (!schedules[raw]) {
    schedules[raw] = new Schedule(JSON.parse(raw));
  }
  return schedules[raw];
}

// wrap returns an iteration function that waits for the iteration's
// intended start, calls fn, and records corrected_latency and schedule_lag.
export function wrap(fn) {
  return function intendedIteration(data) {
    const sched = scheduleFor(__ENV);
    const i = exec.scenario.iterationInTest;
    const intended = exec.scenario.startTime + sched.offsetNs(i) / NS_PER_MS;
    const early = intended - Date.now();
    if (early > 0) {
      sleep(early / 1000);
    }
    const start = Date.now();
    try {
      return fn(data);
    } finally {
      const end = Date.now();
      scheduleLag.add(Math.max(start - intended, 0));
      correctedLatency.add(end - intended);
    }
  };
}

// chargeDropped records, for every arrival of the schedule that never
// started, corrected_latency = now − intended tagged outcome=dropped.
// started is the number of arrivals that began (shared-iterations hands
// out indices in order, so those are 0 … started−1); scenarioStartMs is the
// scenario's start in ms since the epoch.
export function chargeDropped(sched, started, scenarioStartMs, now) {
  let charged = 0;
  for (let i = started; i < sched.count; i++) {
    const intended = scenarioStartMs + sched.offsetNs(i) / NS_PER_MS;
    if (intended > now) {
      break;
    }
    correctedLatency.add(now - intended, { outcome: 'dropped' });
    charged++;
  }
  return charged;
}

// teardown charges the arrivals that never started.
//
// It runs once after the scenarios, where exec.scenario does not exist, so
// it rebuilds what it needs from the public API:
//   - the schedule, the scenario's startTime and its maxDuration from
//     exec.test.options (the first scenario made by intendedScenario);
//   - the arrivals that started from exec.instance: iterations completed
//     plus interrupted, which are arrivals 0 … started−1 because
//     shared-iterations hands out indices in order (this assumes that the
//     intended scenario is the only scenario of the test);
//   - the scenario's start. now − exec.instance.currentTestRunDuration is
//     when the test run began, before setup(); adding the scenario's
//     startTime gives a start that is early by setup()'s duration. When
//     arrivals were left over, the scenario ran out its whole maxDuration,
//     so it began no later than now − maxDuration, which is then the better
//     estimate. The later of the two is used: after a scenario that ran out
//     of time the charges are lower bounds; after an aborted test they can
//     include setup()'s duration.
export function teardown() {
  const found = intendedScenarioOptions();
  if (!found) {
    return;
  }
  const sched = new Schedule(JSON.parse(found.env.INTENDED_SCHEDULE));
  const started = exec.instance.iterationsCompleted + exec.instance.iterationsInterrupted;
  if (started >= sched.count) {
    return;
  }
  const now = Date.now();
  let scenarioStart = now - exec.instance.currentTestRunDuration + durationNs(found.startTime || 0) / NS_PER_MS;
  if (found.maxDuration !== undefined) {
    scenarioStart = Math.max(scenarioStart, now - durationNs(found.maxDuration) / NS_PER_MS);
  }
  chargeDropped(sched, started, scenarioStart, now);
}

// intendedScenarioOptions returns the options of the first scenario made
// by intendedScenario, or undefined.
function intendedScenarioOptions() {
  const scs = (exec.test.options && exec.test.options.scenarios) || {};
  for (const name of Object.keys(scs)) {
    const sc = scs[name];
    if (sc && sc.env && sc.env.INTENDED_SCHEDULE) {
      return sc;
    }
  }
  return undefined;
}
