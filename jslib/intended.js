// intended.js: intended-time pacing and corrected_latency for stock k6.
//
// Some teams must run the k6 binary they have. This module gives their
// scripts honest latency numbers anyway: it fixes every iteration's
// intended start time in advance, paces iterations to it, and measures from
// it, so a server stall shows in the percentiles instead of vanishing from
// them (coordinated omission). It uses only k6's public JavaScript API and
// runs unchanged in k6 and in metronome.
//
// Usage, three lines:
//
//   import { intendedScenario, wrap } from './jslib/intended.js';
//   export const options = { scenarios: { api: intendedScenario({ rate: 100, duration: '1m', vus: 50 }) } };
//   export default wrap(function () { http.get('http://127.0.0.1:8080/'); });
//
// Metrics, with the same names and meaning as metronome's built-ins:
//   corrected_latency   end − intended start, ms (Trend, time)
//   schedule_lag        actual start − intended start, ms (Trend, time)
//   dropped_iterations  arrivals that never started (k6's own Counter)
// An arrival that no VU could start before the schedule's end plus grace
// is dropped: the first VU free after that charges it at once with
// corrected_latency = that moment − intended start, tagged outcome=dropped
// (a lower bound), and adds 1 to dropped_iterations.
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
// The drops are charged inside iterations because that is the only place
// stock k6 tells a script which arrivals started: k6 v2 refuses
// exec.instance in teardown() and handleSummary(). The scenario's
// maxDuration therefore runs dropWindow (default 10s) past the schedule's
// end plus grace, so that shared-iterations hands out every leftover
// arrival; a wrapped iteration that starts after the deadline runs nothing
// and only charges its arrival. k6 still counts those as iterations, and
// they carry the tag outcome=dropped, so iterations{outcome:dropped} tells
// them apart.
//
// Limits, compared with metronome's intended-arrival-rate executor: the VU
// count is fixed (no VUs are added in the background when the backlog
// grows; give vus room for rate × the longest stall), the clock is
// JavaScript's millisecond Date.now() and sleep() has timer precision,
// arrivals are evenly spaced only (no Poisson), and arrivals still left
// when no VU frees up within dropWindow, or when the test is aborted, are
// not charged.

import { sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';

const correctedLatency = new Trend('corrected_latency', true);
const scheduleLag = new Trend('schedule_lag', true);
const droppedIterations = new Counter('dropped_iterations');

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
// after the schedule for late iterations, '30s'), dropWindow (time after
// that to charge the arrivals left over, '10s'), exec, tags, env,
// startTime and gracefulStop.
export function intendedScenario(cfg) {
  const sched = new Schedule(cfg);
  if (sched.count < 1) {
    throw new Error('intended.js: the schedule holds no arrivals; raise the rate or lengthen the duration');
  }
  const vus = Number(cfg.vus || 1);
  const graceNs = durationNs(cfg.grace === undefined ? '30s' : cfg.grace);
  const windowNs = durationNs(cfg.dropWindow === undefined ? '10s' : cfg.dropWindow);
  if (!(windowNs > 0)) {
    throw new Error('intended.js: dropWindow must be longer than 0s: the arrivals left over are charged in it');
  }
  const sc = {
    executor: 'shared-iterations',
    vus: Math.min(vus, sched.count),
    iterations: sched.count,
    maxDuration: `${Math.ceil((sched.lengthNs + graceNs + windowNs) / 1e6)}ms`,
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
  const out = { timeUnit: cfg.timeUnit || '1s', grace: cfg.grace === undefined ? '30s' : cfg.grace };
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
    const cfg = JSON.parse(raw);
    const s = new Schedule(cfg);
    // The moment, from the scenario start, after which an arrival that
    // has not started is dropped.
    s.deadlineMs = (s.lengthNs + durationNs(cfg.grace)) / NS_PER_MS;
    schedules[raw] = s;
  }
  return schedules[raw];
}

// wrap returns an iteration function that waits for the iteration's
// intended start, calls fn, and records corrected_latency and schedule_lag.
// An iteration that starts after the schedule's end plus grace only
// charges its arrival as dropped.
export function wrap(fn) {
  return function intendedIteration(data) {
    const sched = scheduleFor(__ENV);
    const i = exec.scenario.iterationInTest;
    const startMs = exec.scenario.startTime;
    const intended = startMs + sched.offsetNs(i) / NS_PER_MS;
    const now = Date.now();
    if (now > startMs + sched.deadlineMs) {
      // k6 counts this call as an iteration; the tag, which k6 also puts
      // on the iteration's own samples, tells it apart. A VU's tags are
      // reset when it moves to another scenario.
      exec.vu.tags.outcome = 'dropped';
      droppedIterations.add(1);
      correctedLatency.add(now - intended);
      return undefined;
    }
    if (exec.vu.tags.outcome !== undefined) {
      delete exec.vu.tags.outcome;
    }
    const early = intended - now;
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
