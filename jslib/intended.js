// intended.js: intended-time pacing and corrected_latency for stock k6.
//
// Some teams must run the k6 binary they have. This module gives their
// scripts honest latency numbers anyway: it fixes every iteration's
// intended start time in advance, paces iterations to it, and measures
// each request from it, so a server stall shows in the percentiles instead
// of vanishing from them (coordinated omission). It uses only k6's public
// JavaScript API and runs unchanged in k6 and in metronome.
//
// Usage: take http from this module instead of k6/http, build the
// scenario with intendedScenario and pace the iteration function with
// wrap; the function's body stays as it was.
//
//   import http, { intendedScenario, wrap } from './jslib/intended.js';
//   export const options = { scenarios: { api: intendedScenario({ rate: 100, duration: '1m', vus: 50 }) } };
//   export default wrap(function () { http.get('http://127.0.0.1:8080/'); sleep(1); });
//
// Metrics, with the same names and meaning as metronome's built-ins:
//   corrected_latency   one sample per request: the request's own time
//                       plus how late its iteration started, ms (Trend,
//                       time), tagged as k6 tags the request's
//                       http_req_duration; think time is in no value
//   schedule_lag        actual start − intended start, ms, per iteration
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
// until t_i; a VU that picks it up late starts at once and the delay, its
// schedule_lag, is added to every request the iteration makes.
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
// arrivals are evenly spaced only (no Poisson), arrivals still left when
// no VU frees up within dropWindow, or when the test is aborted, are not
// charged, and neither is a request cut off by the hard stop. A stock k6
// script tells the library only about the response it returns, so the
// hops a redirect or an authentication challenge adds are not recorded
// (k6 records http_req_duration for each), and a request that throws
// (throw: true) records nothing.

import base from 'k6/http';
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

// The schedule of the VU's last wrapped iteration and its raw form: a VU
// mostly stays in one scenario, so the lookup by the long JSON key is
// skipped while the scenario's env is the same.
let lastRaw = null;
let lastSchedule = null;

function scheduleFor(env) {
  const raw = env.INTENDED_SCHEDULE;
  if (raw === lastRaw) {
    return lastSchedule;
  }
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
  lastRaw = raw;
  lastSchedule = schedules[raw];
  return lastSchedule;
}

// Stock k6 makes a new object, with a native getter per property, each
// time a script reads exec.scenario or exec.vu, and that was the largest
// cost of this library there. Both objects read the VU's state when a
// property is read, not when they are made, so each VU takes them once,
// in its first iteration (k6 refuses them in the init context).
let scenarioInfo = null;
let vuTags = null;

function scenarioNow() {
  if (scenarioInfo === null) {
    scenarioInfo = exec.scenario;
  }
  return scenarioInfo;
}

function tagsNow() {
  if (vuTags === null) {
    vuTags = exec.vu.tags;
  }
  return vuTags;
}

// The schedule_lag of the iteration whose function wrap() is running in
// this VU, in ms, or -1 when none is: a request sent from the function
// finds its lag here. k6 starts a VU's next iteration only once the last
// one and everything it left on the event loop are done, so what is set
// here is the iteration under way's. The iteration's state lives in the
// module rather than in an object per iteration: this library must add as
// little as it can to stock k6's cost per iteration.
let currentLag = -1;

// The last iteration wrap() started in this VU: its arrival, its
// scenario's start time (which, with the arrival, tells it from any other
// iteration of the VU) and its lag, -1 for none. A request sent after the
// function returned, from a callback of the same iteration, finds its lag
// here.
let lastIndex = -1;
let lastStart = 0;
let lastLag = -1;

// Whether this VU has sent a request through http: until it has, an
// iteration that sends none records the previous release's sample.
let sentThroughHTTP = false;

// wrap returns an iteration function that waits for the iteration's
// intended start, records schedule_lag and calls fn; the requests fn sends
// through http record corrected_latency with that lag. An iteration that
// starts after the schedule's end plus grace only charges its arrival as
// dropped.
export function wrap(fn) {
  return function intendedIteration(data) {
    // The helpers' calls are inlined where they are cheap to skip: in
    // stock k6 a JavaScript call costs about 600 instructions.
    const sched = scheduleFor(__ENV);
    const sc = scenarioInfo === null ? scenarioNow() : scenarioInfo;
    const i = sc.iterationInTest;
    const startMs = sc.startTime;
    const intended = startMs + (sched.ramp ? sched.offsetNs(i) : i * sched.periodNs) / NS_PER_MS;
    let now = Date.now();
    currentLag = -1;
    lastLag = -1;
    if (now > startMs + sched.deadlineMs) {
      // k6 counts this call as an iteration; the tag, which k6 also puts
      // on the iteration's own samples, tells it apart. A VU's tags are
      // reset when it moves to another scenario.
      tagsNow().outcome = 'dropped';
      droppedIterations.add(1);
      correctedLatency.add(now - intended);
      return undefined;
    }
    const tags = vuTags === null ? tagsNow() : vuTags;
    if (tags.outcome !== undefined) {
      delete tags.outcome;
    }
    const early = intended - now;
    if (early > 0) {
      sleep(early / 1000);
      now = Date.now();
    }
    const late = now - intended;
    const lag = late > 0 ? late : 0;
    scheduleLag.add(lag);
    currentLag = lag;
    lastIndex = i;
    lastStart = startMs;
    lastLag = lag;
    let out;
    try {
      out = fn(data);
    } catch (e) {
      currentLag = -1;
      legacySample(i, intended);
      throw e;
    }
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') {
      return settled(out, i, intended);
    }
    currentLag = -1;
    if (!sentThroughHTTP) {
      legacySample(i, intended);
    }
    return out;
  };
}

// settled ends the wrapped iteration i, intended at intended, when the
// promise its function returned settles. It is a function of its own so
// that the closure it makes is made only for an async iteration function.
function settled(out, i, intended) {
  return Promise.resolve(out).finally(() => {
    currentLag = -1;
    legacySample(i, intended);
  });
}

// legacySample keeps, for one release, what wrap() recorded before
// corrected_latency was per request: when the script sends its requests
// through k6/http rather than through this module's http, an iteration
// records end − intended start, sleep() included. It applies only to a VU
// that has not sent a request through http; the VU that runs the
// scenario's first arrival (i = 0) says so once.
function legacySample(i, intended) {
  if (sentThroughHTTP) {
    return;
  }
  correctedLatency.add(Date.now() - intended);
  if (i === 0) {
    console.warn(
      'intended.js: no request of this iteration went through the http of intended.js, so corrected_latency is ' +
        'recorded per iteration, end − intended start with sleep() included, as in the previous release; import http ' +
        "from intended.js instead of 'k6/http' to record it per request without think time (the per-iteration " +
        'fallback goes in the next release)',
    );
  }
}

// iterationLag returns the schedule_lag of the wrapped iteration a request
// is sent in, or -1 when it records nothing: outside a scenario made by
// intendedScenario (setup, teardown, other executors), where stock k6 has
// no intended times. A request in such a scenario but outside wrap()
// aborts the test: nothing paces its iterations.
function iterationLag() {
  if (currentLag >= 0) {
    sentThroughHTTP = true;
    return currentLag;
  }
  if (!__ENV.INTENDED_SCHEDULE) {
    return -1;
  }
  // Sent after the wrapped function returned: from one of its callbacks
  // if the iteration under way is the last one wrap() started.
  const sc = scenarioNow();
  if (lastLag >= 0 && sc.iterationInTest === lastIndex && sc.startTime === lastStart) {
    sentThroughHTTP = true;
    return lastLag;
  }
  exec.test.abort(
    `intended.js: scenario ${JSON.stringify(scenarioNow().name)} was made by intendedScenario() but runs a function ` +
      'that wrap() does not pace; export it as wrap(function () { … })',
  );
  return -1;
}

// The system tags k6 enables by default (its systemTags option).
const DEFAULT_SYSTEM_TAGS = [
  'proto', 'subproto', 'status', 'method', 'url', 'name', 'group', 'check', 'error', 'error_code',
  'tls_version', 'scenario', 'service', 'expected_response',
];

// The tags corrected_latency may carry that k6 puts on a request's
// http_req_duration only when they are among the test's systemTags.
const REQUEST_SYSTEM_TAGS = [
  'name', 'url', 'method', 'error', 'error_code', 'status', 'proto', 'tls_version', 'ocsp_status', 'ip',
  'expected_response',
];

// Which of REQUEST_SYSTEM_TAGS are on, as an object of booleans; each VU
// reads the test's options once.
let tagOn = null;

function systemTagsOn() {
  if (tagOn === null) {
    const list = exec.test.options.systemTags;
    const set = new Set(Array.isArray(list) ? list : DEFAULT_SYSTEM_TAGS);
    const on = {};
    for (const k of REQUEST_SYSTEM_TAGS) {
      on[k] = set.has(k);
    }
    tagOn = on;
  }
  return tagOn;
}

// statusRanges turns expectedStatuses' arguments into a predicate.
function statusRanges(args) {
  const n = args.length;
  return (status) => {
    for (let k = 0; k < n; k++) {
      const a = args[k];
      if (typeof a === 'number' ? status === a : status >= a.min && status <= a.max) {
        return true;
      }
    }
    return false;
  };
}

// What the response callbacks made by expectedStatuses accept. k6 keeps
// them opaque, so the library remembers each one's predicate.
const callbacks = new WeakMap();

// The default client's response callback: 200–399, as in k6.
let clientCallback = statusRanges([{ min: 200, max: 399 }]);

// callbackPredicate returns what the response callback cb accepts: null
// for no callback, undefined for one this module did not make.
function callbackPredicate(cb) {
  if (cb === null || cb === undefined) {
    return null;
  }
  return callbacks.get(cb);
}

function foreignCallback(where) {
  return (
    `intended.js: ${where} got a response callback that intended.js did not make; make it with the ` +
    "expectedStatuses of intended.js's http, so that corrected_latency carries expected_response as k6 sets it"
  );
}

// cleanURL masks the credentials of a URL as k6 does for its tags.
function cleanURL(u) {
  if (typeof u === 'string' && u.indexOf('@') === -1) {
    return u;
  }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)@/.exec(u);
  if (m === null) {
    return u;
  }
  return m[1] + (m[2].includes(':') ? '****:****' : '****') + u.slice(m[0].length - 1);
}

// templateName is the name http.url gave a URL when it differs from the
// URL, or ''.
function templateName(u) {
  if (u === null || typeof u !== 'object' || typeof u.name !== 'string' || typeof u.url !== 'string') {
    return '';
  }
  const clean = typeof u.clean_url === 'string' ? u.clean_url : cleanURL(u.url);
  return u.name !== clean ? u.name : '';
}

// requestTags returns the tags k6 puts on the http_req_duration of the
// response res, whose error_code is code, to a request for target with
// params, less the VU's own (scenario, group, test-wide and VU tags), which
// k6 adds to every sample of a custom metric. A response callback in params
// that this module did not make aborts the test, and requestTags returns
// null: its verdict cannot be known. Each property of res is read at most
// once: in stock k6 every read of a response's property goes through
// reflection.
function requestTags(res, code, target, params) {
  const on = systemTagsOn();
  const tags = {};
  const withParams = params !== null && typeof params === 'object';
  const user = withParams ? params.tags : undefined;
  if (user !== null && typeof user === 'object') {
    Object.assign(tags, user);
  }
  let name = tags.name;
  if (name === undefined && on.name) {
    const t = templateName(target);
    if (t !== '') {
      name = tags.name = t;
    }
  }
  const url = res.url;
  if (name === undefined) {
    if (on.name || on.url) {
      const clean = cleanURL(url);
      if (on.name) {
        tags.name = clean;
      }
      if (on.url) {
        tags.url = clean;
      }
    }
  } else if (on.url) {
    tags.url = String(name);
  }
  if (on.method) {
    const req = res.request;
    if (req) {
      tags.method = req.method;
    }
  }
  // k6 sets error only with an error_code.
  if (code && on.error) {
    const err = res.error;
    if (err) {
      tags.error = err;
    }
  }
  if (code && on.error_code) {
    tags.error_code = String(code);
  }
  const status = res.status;
  if (on.status) {
    tags.status = String(status);
  }
  if (on.proto) {
    const proto = res.proto;
    if (proto) {
      tags.proto = proto;
    }
  }
  // A response that came over plain HTTP has no TLS version.
  const tlsVersion = typeof url === 'string' && url.startsWith('http://') ? '' : res.tls_version;
  if (tlsVersion) {
    if (on.tls_version) {
      tags.tls_version = tlsVersion;
    }
    if (on.ocsp_status) {
      const ocsp = res.ocsp;
      if (ocsp && ocsp.status) {
        tags.ocsp_status = ocsp.status;
      }
    }
  }
  if (on.ip) {
    const ip = res.remote_ip;
    if (ip) {
      tags.ip = ip;
    }
  }
  let expect = clientCallback;
  if (withParams && hasOwn.call(params, 'responseCallback')) {
    expect = callbackPredicate(params.responseCallback);
    if (expect === undefined) {
      exec.test.abort(foreignCallback('params.responseCallback'));
      return null;
    }
  }
  if (expect !== null && on.expected_response) {
    tags.expected_response = String(expect(status));
  }
  return tags;
}

const hasOwn = Object.prototype.hasOwnProperty;

// INVALID_URL is the error_code of a request that never reached the
// network, for which k6 records no sample.
const INVALID_URL = 1020;

// plainRequest reports whether what requestTags returns for a response to
// a request for target with params depends on the response alone: the URL
// is a string (not http.url's object, which may name it) and params hold
// no tags and no response callback.
function plainRequest(target, params) {
  if (typeof target !== 'string') {
    return false;
  }
  if (params === null || typeof params !== 'object') {
    return true;
  }
  const user = params.tags;
  return (user === null || typeof user !== 'object') && !hasOwn.call(params, 'responseCallback');
}

// The tags requestTags returned for this VU's responses to plain requests
// that carried no error, by the response's URL: a list of shapes, each
// with the facts of the response the tags follow from. In stock k6,
// building a tags object costs about 48k instructions, more than the
// request's own samples, while reading the facts that decide it costs
// about 4k, and a VU mostly sends the same few requests. At most
// MAX_SHAPES are kept, so that a script that puts an id in each URL keeps
// no copy of each.
let shapes = null;
let shapeCount = 0;
let lastShape = null;
const MAX_SHAPES = 64;

// plainTags returns the tags of the response res, with no error_code, to
// a plain request (see plainRequest) sent with the HTTP method method (a
// string: k6 and metronome set res.request.method from it), from the
// shapes when one matches, else from requestTags. It takes requestTags's
// path whenever the ip or ocsp_status system tag is on: those read more of
// the response.
function plainTags(res, method, target, params) {
  const on = tagOn === null ? systemTagsOn() : tagOn;
  if (on.ip || on.ocsp_status) {
    return requestTags(res, 0, target, params);
  }
  const url = res.url;
  const status = res.status;
  const proto = res.proto;
  // Most VUs send one request over and over: the last shape used is
  // tried before the lookup.
  const last = lastShape;
  if (
    last !== null &&
    last.url === url &&
    last.method === method &&
    last.status === status &&
    last.proto === proto &&
    last.expect === clientCallback &&
    (last.plainHTTP || last.tlsVersion === res.tls_version)
  ) {
    return last.tags;
  }
  const list = shapes === null ? undefined : shapes.get(url);
  if (list !== undefined) {
    for (let k = 0; k < list.length; k++) {
      const sh = list[k];
      if (
        sh.method === method &&
        sh.status === status &&
        sh.proto === proto &&
        sh.expect === clientCallback &&
        (sh.plainHTTP || sh.tlsVersion === res.tls_version)
      ) {
        lastShape = sh;
        return sh.tags;
      }
    }
  }
  const tags = requestTags(res, 0, target, params);
  if (tags === null || shapeCount >= MAX_SHAPES) {
    return tags;
  }
  // A response that came over plain HTTP has no TLS version.
  const plainHTTP = typeof url === 'string' && url.startsWith('http://');
  const tlsVersion = plainHTTP ? '' : res.tls_version;
  const sh = { url, method, status, proto, expect: clientCallback, plainHTTP, tlsVersion, tags };
  if (shapes === null) {
    shapes = new Map();
  }
  if (list === undefined) {
    shapes.set(url, [sh]);
  } else {
    list.push(sh);
  }
  shapeCount++;
  lastShape = sh;
  return tags;
}

// record adds the corrected_latency of one response: its own time, from
// asking for a connection to the answer, plus the iteration's lag.
// timings.blocked runs from asking for a connection to having one, so it
// holds connecting and tls_handshaking. method is the request's HTTP
// method when the call fixed it as a string, else undefined.
function record(lag, res, target, params, method) {
  if (lag < 0 || res === null || typeof res !== 'object') {
    return;
  }
  const t = res.timings;
  if (!t) {
    return;
  }
  const code = res.error_code;
  if (code === INVALID_URL) {
    return;
  }
  // A request without params, the most common, skips plainRequest's call.
  const plain =
    !code &&
    typeof method === 'string' &&
    (params === undefined ? typeof target === 'string' : plainRequest(target, params));
  const tags = plain ? plainTags(res, method, target, params) : requestTags(res, code, target, params);
  if (tags === null) {
    return;
  }
  correctedLatency.add(t.duration + t.blocked + lag, tags);
}

// measured returns k6/http's function of that name, recording the
// response of each call; the call's arguments hold the URL at urlAt and
// the params at paramsAt. method is the HTTP method the function sends,
// or undefined when the call's first argument holds it.
function measured(name, urlAt, paramsAt, method) {
  const f = base[name];
  return (...args) => {
    let lag = currentLag;
    if (lag >= 0) {
      sentThroughHTTP = true;
    } else {
      lag = iterationLag();
    }
    // A spread call goes through the iterator protocol; the usual arities
    // are passed as they are.
    const n = args.length;
    let res;
    if (n === 1) {
      res = f(args[0]);
    } else if (n === 2) {
      res = f(args[0], args[1]);
    } else if (n === 3) {
      res = f(args[0], args[1], args[2]);
    } else {
      res = f(...args);
    }
    record(lag, res, args[urlAt], args[paramsAt], method === undefined ? args[0] : method);
    return res;
  };
}

// batchTarget returns the URL and params of one http.batch request, in
// any of k6's three forms: a URL, [method, url, body, params] or
// { method, url, body, params }.
function batchTarget(req) {
  if (Array.isArray(req)) {
    return [req[1], req[3]];
  }
  // An http.url object is the URL form: it has a name.
  if (req !== null && typeof req === 'object' && typeof req.name !== 'string') {
    return [req.url, req.params];
  }
  return [req, undefined];
}

// http is k6/http with corrected_latency recorded for every request sent
// in an iteration that wrap() paces; elsewhere it is k6/http unchanged.
// It has k6/http's functions and constants, so that a script takes it in
// place of k6/http by changing its import.
const http = Object.assign({}, base, {
  get: measured('get', 0, 1, 'GET'),
  head: measured('head', 0, 1, 'HEAD'),
  post: measured('post', 0, 2, 'POST'),
  put: measured('put', 0, 2, 'PUT'),
  patch: measured('patch', 0, 2, 'PATCH'),
  del: measured('del', 0, 2, 'DELETE'),
  options: measured('options', 0, 2, 'OPTIONS'),
  request: measured('request', 1, 3, undefined),
  asyncRequest(...args) {
    const lag = iterationLag();
    return base.asyncRequest(...args).then((res) => {
      record(lag, res, args[1], args[3], args[0]);
      return res;
    });
  },
  batch(reqs, ...rest) {
    const lag = iterationLag();
    const res = base.batch(reqs, ...rest);
    if (lag >= 0 && reqs !== null && typeof reqs === 'object') {
      for (const k of Object.keys(reqs)) {
        const [url, params] = batchTarget(reqs[k]);
        record(lag, res[k], url, params);
      }
    }
    return res;
  },
  expectedStatuses(...args) {
    const cb = base.expectedStatuses(...args);
    callbacks.set(cb, statusRanges(args));
    return cb;
  },
  setResponseCallback(cb) {
    const p = callbackPredicate(cb);
    if (p === undefined) {
      throw new Error(foreignCallback('setResponseCallback'));
    }
    base.setResponseCallback(cb);
    clientCallback = p;
  },
});

export default http;

export const {
  get, head, post, put, patch, del, options, request, asyncRequest, batch,
  expectedStatuses, setResponseCallback, url, file, cookieJar, CookieJar,
} = http;
