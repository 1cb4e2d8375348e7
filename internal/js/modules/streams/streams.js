// k6/experimental/streams: the WHATWG Streams Standard's default
// (non-byte) ReadableStream and WritableStream, written from the spec's
// abstract operations (https://streams.spec.whatwg.org/), with the
// surface and the error messages of k6 v2.2.0. The file is one function
// expression; streams.go runs it once per VU with a maker of GoErrors and
// takes the classes it returns.
(function (goError) {
  'use strict';

  // ---- Helpers: promises, errors, internal slots ----

  const noop = () => {};

  // A deferred is a promise with its resolving functions and whether it
  // is still pending (the spec asks of some promises whether they are).
  function deferred() {
    const d = { pending: true };
    d.promise = new Promise((resolve, reject) => {
      d.resolve = (v) => { d.pending = false; resolve(v); };
      d.reject = (e) => { d.pending = false; reject(e); };
    });
    return d;
  }
  function resolvedDeferred(v) {
    const d = deferred();
    d.resolve(v);
    return d;
  }
  function rejectedDeferred(e) {
    const d = deferred();
    d.reject(e);
    setHandled(d.promise);
    return d;
  }
  const resolvedWith = (v) => Promise.resolve(v);
  function rejectedWith(e) {
    return Promise.reject(e);
  }
  // setHandled marks a promise as handled, so that a rejection nobody
  // waits for does not fail the iteration ([[PromiseIsHandled]]).
  function setHandled(p) {
    p.then(undefined, noop);
  }
  // upon reacts to a promise's settlement without making a promise that
  // could reject unhandled.
  function upon(p, onFulfilled, onRejected) {
    p.then(onFulfilled, onRejected || noop);
  }
  function promiseCall(fn, thisArg, args) {
    try {
      return resolvedWith(fn.apply(thisArg, args));
    } catch (e) {
      return rejectedWith(e);
    }
  }
  function notSupported(what) {
    return goError('NotSupportedError:' + what);
  }
  // isDictionary is what k6 takes for an object argument: a plain object,
  // not an array or a function.
  function isDictionary(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
  function isNullish(v) {
    return v === undefined || v === null;
  }

  // slots holds every object's internal record; a record's kind is the
  // brand the methods check.
  const slots = new WeakMap();
  function record(obj, kind, what) {
    const r = typeof obj === 'object' && obj !== null ? slots.get(obj) : undefined;
    if (r === undefined || r.kind !== kind) {
      throw new TypeError('value is not a ' + what);
    }
    return r;
  }
  function publicObject(proto, r) {
    const o = Object.create(proto);
    slots.set(o, r);
    r.object = o;
    return o;
  }

  // defineClass puts methods and getters on a constructor's prototype as
  // Web IDL does: enumerable, configurable, writable methods.
  function defineClass(ctor, methods, getters) {
    for (const name of Object.keys(methods)) {
      Object.defineProperty(ctor.prototype, name, { value: methods[name], enumerable: true, configurable: true, writable: true });
    }
    for (const name of Object.keys(getters || {})) {
      Object.defineProperty(ctor.prototype, name, { get: getters[name], enumerable: true, configurable: true });
    }
  }

  // ---- Queue with sizes ----

  function resetQueue(c) {
    c.queue = [];
    c.queueTotalSize = 0;
  }
  function enqueueValueWithSize(c, value, size) {
    size = Number(size);
    if (!(size >= 0) || size === Infinity) {
      throw new RangeError('size must be a finite, non-NaN number');
    }
    c.queue.push({ value, size });
    c.queueTotalSize += size;
  }
  function dequeueValue(c) {
    const pair = c.queue.shift();
    c.queueTotalSize -= pair.size;
    if (c.queueTotalSize < 0) {
      c.queueTotalSize = 0;
    }
    return pair.value;
  }
  function peekQueueValue(c) {
    return c.queue[0].value;
  }

  // ---- Queuing strategies ----

  function countSize() {
    return 1;
  }

  // strategyOf reads a constructor's strategy argument as k6 does: a
  // highWaterMark of 1 and a size of 1 a chunk unless it says otherwise.
  function strategyOf(arg) {
    const s = isNullish(arg) ? {} : Object(arg);
    const hwm = s.highWaterMark;
    const size = s.size;
    let sizeAlgorithm = countSize;
    if (!isNullish(size)) {
      if (typeof size !== 'function') {
        throw new TypeError('size must be a function');
      }
      sizeAlgorithm = (chunk) => size(chunk);
    }
    let highWaterMark = 1;
    if (!isNullish(hwm)) {
      if (typeof hwm !== 'number' || !(hwm >= 0)) {
        throw new RangeError('highWaterMark must be a non-negative number');
      }
      highWaterMark = hwm;
    }
    return { sizeAlgorithm, highWaterMark };
  }

  function CountQueuingStrategy(init) {
    if (new.target === undefined) {
      // k6 makes one without new too (WritableStream it refuses).
      return Reflect.construct(CountQueuingStrategy, arguments);
    }
    if (arguments.length !== 1) {
      throw new TypeError('CountQueuingStrategy takes a single argument');
    }
    if (!isDictionary(init)) {
      throw new TypeError('CountQueuingStrategy argument must be an object');
    }
    if (isNullish(init.highWaterMark)) {
      throw new TypeError("CountQueuingStrategy argument must have 'highWaterMark' property");
    }
    Object.defineProperty(this, 'highWaterMark', { value: init.highWaterMark, enumerable: true });
    Object.defineProperty(this, 'size', { value: countSize, enumerable: true });
  }

  // ---- ReadableStream ----

  function ReadableStream(underlyingSource, strategy) {
    if (new.target === undefined) {
      // k6 makes one without new too (WritableStream it refuses).
      return Reflect.construct(ReadableStream, arguments);
    }
    const source = underlyingSource;
    if (source !== undefined) {
      if (!isDictionary(source)) {
        throw new TypeError('underlyingSource must be an object');
      }
      if (source.type !== undefined && String(source.type) !== 'bytes') {
        throw new TypeError('invalid underlying source type');
      }
    }
    const stream = { kind: 'ReadableStream', state: 'readable', reader: undefined, storedError: undefined, disturbed: false, controller: undefined };
    slots.set(this, stream);
    stream.object = this;
    if (source !== undefined && String(source.type) === 'bytes') {
      throw notSupported("'bytes' stream is not supported yet");
    }
    const { sizeAlgorithm, highWaterMark } = strategyOf(strategy);
    setUpControllerFromSource(stream, source === undefined ? {} : source, highWaterMark, sizeAlgorithm);
  }

  function sourceCallback(source, name) {
    const fn = source[name];
    if (fn === undefined) {
      return undefined;
    }
    if (typeof fn !== 'function') {
      throw new TypeError('underlyingSource.[[' + name + ']] must be a function');
    }
    return fn;
  }

  function setUpControllerFromSource(stream, source, highWaterMark, sizeAlgorithm) {
    const start = sourceCallback(source, 'start');
    const pull = sourceCallback(source, 'pull');
    const cancel = sourceCallback(source, 'cancel');
    const c = { kind: 'ReadableStreamDefaultController' };
    publicObject(ReadableStreamDefaultController.prototype, c);
    const startAlgorithm = start ? () => start.call(source, c.object) : () => undefined;
    const pullAlgorithm = pull ? () => promiseCall(pull, source, [c.object]) : () => resolvedWith(undefined);
    const cancelAlgorithm = cancel ? (reason) => promiseCall(cancel, source, [reason]) : () => resolvedWith(undefined);
    setUpReadableController(stream, c, startAlgorithm, pullAlgorithm, cancelAlgorithm, highWaterMark, sizeAlgorithm);
  }

  function setUpReadableController(stream, c, startAlgorithm, pullAlgorithm, cancelAlgorithm, highWaterMark, sizeAlgorithm) {
    c.stream = stream;
    resetQueue(c);
    c.started = false;
    c.closeRequested = false;
    c.pullAgain = false;
    c.pulling = false;
    c.strategySizeAlgorithm = sizeAlgorithm;
    c.strategyHWM = highWaterMark;
    c.pullAlgorithm = pullAlgorithm;
    c.cancelAlgorithm = cancelAlgorithm;
    stream.controller = c;
    const startResult = startAlgorithm();
    upon(resolvedWith(startResult), () => {
      c.started = true;
      readableControllerCallPullIfNeeded(c);
    }, (r) => readableControllerError(c, r));
  }

  const isReadableLocked = (stream) => stream.reader !== undefined;

  function readableStreamCancel(stream, reason) {
    stream.disturbed = true;
    if (stream.state === 'closed') {
      return resolvedWith(undefined);
    }
    if (stream.state === 'errored') {
      return rejectedWith(stream.storedError);
    }
    readableStreamClose(stream);
    const c = stream.controller;
    resetQueue(c);
    const result = c.cancelAlgorithm(reason);
    readableControllerClearAlgorithms(c);
    return result.then(() => undefined);
  }

  function readableStreamClose(stream) {
    stream.state = 'closed';
    const reader = stream.reader;
    if (reader === undefined) {
      return;
    }
    reader.closed.resolve(undefined);
    const requests = reader.readRequests;
    reader.readRequests = [];
    for (const req of requests) {
      req.closeSteps();
    }
  }

  function readableStreamError(stream, e) {
    stream.state = 'errored';
    stream.storedError = e;
    const reader = stream.reader;
    if (reader === undefined) {
      return;
    }
    reader.closed.reject(e);
    setHandled(reader.closed.promise);
    readerErrorReadRequests(reader, e);
  }

  function readableStreamFulfillReadRequest(stream, chunk, done) {
    const req = stream.reader.readRequests.shift();
    if (done) {
      req.closeSteps();
    } else {
      req.chunkSteps(chunk);
    }
  }

  const numReadRequests = (stream) => stream.reader.readRequests.length;

  defineClass(ReadableStream, {
    cancel(reason) {
      const stream = record(this, 'ReadableStream', 'ReadableStream');
      if (isReadableLocked(stream)) {
        return rejectedWith(new TypeError('cannot cancel a locked stream'));
      }
      return readableStreamCancel(stream, reason);
    },
    getReader(options) {
      const stream = record(this, 'ReadableStream', 'ReadableStream');
      const mode = isNullish(options) ? undefined : options.mode;
      if (mode === undefined) {
        return acquireDefaultReader(stream);
      }
      if (String(mode) !== 'byob') {
        throw new TypeError("options.mode is not 'byob'");
      }
      throw notSupported("'byob' mode is not supported yet");
    },
    tee() {
      record(this, 'ReadableStream', 'ReadableStream');
      throw notSupported("'tee()' is not supported yet");
    },
  }, {
    locked() {
      return isReadableLocked(record(this, 'ReadableStream', 'ReadableStream'));
    },
  });

  // ---- ReadableStreamDefaultReader ----

  function ReadableStreamDefaultReader(stream) {
    if (new.target === undefined) {
      // k6 makes one without new too (WritableStream it refuses).
      return Reflect.construct(ReadableStreamDefaultReader, arguments);
    }
    if (arguments.length !== 1) {
      throw new TypeError('ReadableStreamDefaultReader takes a single argument');
    }
    const s = typeof stream === 'object' && stream !== null ? slots.get(stream) : undefined;
    if (s === undefined || s.kind !== 'ReadableStream') {
      throw new TypeError('ReadableStreamDefaultReader argument must be a ReadableStream');
    }
    const reader = { kind: 'ReadableStreamDefaultReader' };
    setUpDefaultReader(reader, s);
    slots.set(this, reader);
    reader.object = this;
  }

  function acquireDefaultReader(stream) {
    const reader = { kind: 'ReadableStreamDefaultReader' };
    setUpDefaultReader(reader, stream);
    return publicObject(ReadableStreamDefaultReader.prototype, reader);
  }

  function setUpDefaultReader(reader, stream) {
    if (isReadableLocked(stream)) {
      throw new TypeError('stream is locked');
    }
    reader.stream = stream;
    stream.reader = reader;
    if (stream.state === 'readable') {
      reader.closed = deferred();
    } else if (stream.state === 'closed') {
      reader.closed = resolvedDeferred(undefined);
    } else {
      reader.closed = rejectedDeferred(stream.storedError);
    }
    reader.readRequests = [];
  }

  function readerErrorReadRequests(reader, e) {
    const requests = reader.readRequests;
    reader.readRequests = [];
    for (const req of requests) {
      req.errorSteps(e);
    }
  }

  function readerRelease(reader) {
    const stream = reader.stream;
    if (stream.state === 'readable') {
      reader.closed.reject(new TypeError('stream is readable'));
    } else {
      reader.closed = rejectedDeferred(new TypeError('stream is not readable'));
    }
    setHandled(reader.closed.promise);
    stream.reader = undefined;
    reader.stream = undefined;
    readerErrorReadRequests(reader, new TypeError('reader released'));
  }

  function readerRead(reader, req) {
    const stream = reader.stream;
    stream.disturbed = true;
    if (stream.state === 'closed') {
      req.closeSteps();
    } else if (stream.state === 'errored') {
      req.errorSteps(stream.storedError);
    } else {
      readableControllerPullSteps(stream.controller, req);
    }
  }

  defineClass(ReadableStreamDefaultReader, {
    read() {
      const reader = record(this, 'ReadableStreamDefaultReader', 'ReadableStreamDefaultReader');
      if (reader.stream === undefined) {
        return rejectedWith(new TypeError('stream is undefined'));
      }
      const d = deferred();
      readerRead(reader, {
        chunkSteps: (chunk) => d.resolve({ value: chunk, done: false }),
        closeSteps: () => d.resolve({ value: undefined, done: true }),
        errorSteps: (e) => d.reject(e),
      });
      return d.promise;
    },
    cancel(reason) {
      const reader = record(this, 'ReadableStreamDefaultReader', 'ReadableStreamDefaultReader');
      if (reader.stream === undefined) {
        return rejectedWith(new TypeError('stream is undefined'));
      }
      return readableStreamCancel(reader.stream, reason);
    },
    releaseLock() {
      const reader = record(this, 'ReadableStreamDefaultReader', 'ReadableStreamDefaultReader');
      if (reader.stream !== undefined) {
        readerRelease(reader);
      }
    },
  }, {
    closed() {
      return record(this, 'ReadableStreamDefaultReader', 'ReadableStreamDefaultReader').closed.promise;
    },
  });

  // ---- ReadableStreamDefaultController ----

  function ReadableStreamDefaultController() {
    throw new TypeError('ReadableStreamDefaultController is not constructable');
  }

  function readableControllerCanCloseOrEnqueue(c) {
    return !c.closeRequested && c.stream.state === 'readable';
  }

  function readableControllerDesiredSize(c) {
    switch (c.stream.state) {
      case 'errored':
        return null;
      case 'closed':
        return 0;
    }
    return c.strategyHWM - c.queueTotalSize;
  }

  function readableControllerShouldCallPull(c) {
    if (!readableControllerCanCloseOrEnqueue(c) || !c.started) {
      return false;
    }
    if (isReadableLocked(c.stream) && numReadRequests(c.stream) > 0) {
      return true;
    }
    return readableControllerDesiredSize(c) > 0;
  }

  function readableControllerCallPullIfNeeded(c) {
    if (!readableControllerShouldCallPull(c)) {
      return;
    }
    if (c.pulling) {
      c.pullAgain = true;
      return;
    }
    c.pulling = true;
    upon(c.pullAlgorithm(), () => {
      c.pulling = false;
      if (c.pullAgain) {
        c.pullAgain = false;
        readableControllerCallPullIfNeeded(c);
      }
    }, (e) => readableControllerError(c, e));
  }

  function readableControllerClearAlgorithms(c) {
    c.pullAlgorithm = undefined;
    c.cancelAlgorithm = undefined;
    c.strategySizeAlgorithm = undefined;
  }

  function readableControllerClose(c) {
    if (!readableControllerCanCloseOrEnqueue(c)) {
      return;
    }
    c.closeRequested = true;
    if (c.queue.length === 0) {
      readableControllerClearAlgorithms(c);
      readableStreamClose(c.stream);
    }
  }

  function readableControllerEnqueue(c, chunk) {
    if (!readableControllerCanCloseOrEnqueue(c)) {
      return;
    }
    const stream = c.stream;
    if (isReadableLocked(stream) && numReadRequests(stream) > 0) {
      readableStreamFulfillReadRequest(stream, chunk, false);
    } else {
      let size;
      try {
        size = c.strategySizeAlgorithm(chunk);
        enqueueValueWithSize(c, chunk, size);
      } catch (e) {
        readableControllerError(c, e);
        throw e;
      }
    }
    readableControllerCallPullIfNeeded(c);
  }

  function readableControllerError(c, e) {
    if (c.stream.state !== 'readable') {
      return;
    }
    resetQueue(c);
    readableControllerClearAlgorithms(c);
    readableStreamError(c.stream, e);
  }

  function readableControllerPullSteps(c, req) {
    const stream = c.stream;
    if (c.queue.length > 0) {
      const chunk = dequeueValue(c);
      if (c.closeRequested && c.queue.length === 0) {
        readableControllerClearAlgorithms(c);
        readableStreamClose(stream);
      } else {
        readableControllerCallPullIfNeeded(c);
      }
      req.chunkSteps(chunk);
    } else {
      stream.reader.readRequests.push(req);
      readableControllerCallPullIfNeeded(c);
    }
  }

  defineClass(ReadableStreamDefaultController, {
    close() {
      const c = record(this, 'ReadableStreamDefaultController', 'ReadableStreamDefaultController');
      if (!readableControllerCanCloseOrEnqueue(c)) {
        throw new TypeError('cannot close or enqueue');
      }
      readableControllerClose(c);
    },
    enqueue(chunk) {
      const c = record(this, 'ReadableStreamDefaultController', 'ReadableStreamDefaultController');
      if (!readableControllerCanCloseOrEnqueue(c)) {
        throw new TypeError('cannot close or enqueue');
      }
      readableControllerEnqueue(c, chunk);
    },
    error(e) {
      readableControllerError(record(this, 'ReadableStreamDefaultController', 'ReadableStreamDefaultController'), e);
    },
  }, {
    desiredSize() {
      return readableControllerDesiredSize(record(this, 'ReadableStreamDefaultController', 'ReadableStreamDefaultController'));
    },
  });

  // ---- WritableStream ----

  const closeSentinel = {};

  function WritableStream(underlyingSink, strategy) {
    if (new.target === undefined) {
      throw new TypeError('WritableStream constructor must be called with new');
    }
    const sink = underlyingSink;
    if (sink !== undefined && !isDictionary(sink)) {
      throw new TypeError('underlyingSink must be an object');
    }
    if (sink !== undefined && sink.type !== undefined) {
      throw new RangeError("'type' is not supported by WritableStream");
    }
    const { sizeAlgorithm, highWaterMark } = strategyOf(strategy);
    const stream = {
      kind: 'WritableStream', state: 'writable', storedError: undefined, writer: undefined, controller: undefined,
      inFlightWriteRequest: undefined, closeRequest: undefined, inFlightCloseRequest: undefined,
      pendingAbortRequest: undefined, writeRequests: [], backpressure: false,
    };
    slots.set(this, stream);
    stream.object = this;
    setUpControllerFromSink(stream, sink === undefined ? {} : sink, highWaterMark, sizeAlgorithm);
  }

  function sinkCallback(sink, name) {
    const fn = sink[name];
    if (fn === undefined) {
      return undefined;
    }
    if (typeof fn !== 'function') {
      throw new TypeError('underlyingSink.[[' + name + ']] must be a function');
    }
    return fn;
  }

  function setUpControllerFromSink(stream, sink, highWaterMark, sizeAlgorithm) {
    const start = sinkCallback(sink, 'start');
    const write = sinkCallback(sink, 'write');
    const close = sinkCallback(sink, 'close');
    const abort = sinkCallback(sink, 'abort');
    const c = { kind: 'WritableStreamDefaultController' };
    publicObject(WritableStreamDefaultController.prototype, c);
    c.stream = stream;
    stream.controller = c;
    resetQueue(c);
    c.started = false;
    c.strategySizeAlgorithm = sizeAlgorithm;
    c.strategyHWM = highWaterMark;
    c.writeAlgorithm = write ? (chunk) => promiseCall(write, sink, [chunk, c.object]) : () => resolvedWith(undefined);
    c.closeAlgorithm = close ? () => promiseCall(close, sink, []) : () => resolvedWith(undefined);
    c.abortAlgorithm = abort ? (reason) => promiseCall(abort, sink, [reason]) : () => resolvedWith(undefined);
    writableStreamUpdateBackpressure(stream, writableControllerGetBackpressure(c));
    const startResult = start ? start.call(sink, c.object) : undefined;
    upon(resolvedWith(startResult), () => {
      c.started = true;
      writableControllerAdvanceQueueIfNeeded(c);
    }, (r) => {
      c.started = true;
      writableStreamDealWithRejection(stream, r);
    });
  }

  const isWritableLocked = (stream) => stream.writer !== undefined;
  const closeQueuedOrInFlight = (stream) => stream.closeRequest !== undefined || stream.inFlightCloseRequest !== undefined;
  const hasOperationMarkedInFlight = (stream) => stream.inFlightWriteRequest !== undefined || stream.inFlightCloseRequest !== undefined;

  function writableStreamAbort(stream, reason) {
    if (stream.state === 'closed' || stream.state === 'errored') {
      return resolvedWith(undefined);
    }
    if (stream.pendingAbortRequest !== undefined) {
      return stream.pendingAbortRequest.d.promise;
    }
    let wasAlreadyErroring = false;
    if (stream.state === 'erroring') {
      wasAlreadyErroring = true;
      reason = undefined;
    }
    const d = deferred();
    stream.pendingAbortRequest = { d, reason, wasAlreadyErroring };
    if (!wasAlreadyErroring) {
      writableStreamStartErroring(stream, reason);
    }
    return d.promise;
  }

  function writableStreamClose(stream) {
    if (stream.state === 'closed' || stream.state === 'errored') {
      return rejectedWith(new TypeError('stream is already closed or errored'));
    }
    const d = deferred();
    stream.closeRequest = d;
    const writer = stream.writer;
    if (writer !== undefined && stream.backpressure && stream.state === 'writable') {
      writer.ready.resolve(undefined);
    }
    enqueueValueWithSize(stream.controller, closeSentinel, 0);
    writableControllerAdvanceQueueIfNeeded(stream.controller);
    return d.promise;
  }

  function writableStreamDealWithRejection(stream, error) {
    if (stream.state === 'writable') {
      writableStreamStartErroring(stream, error);
      return;
    }
    writableStreamFinishErroring(stream);
  }

  function writableStreamStartErroring(stream, reason) {
    const c = stream.controller;
    stream.state = 'erroring';
    stream.storedError = reason;
    const writer = stream.writer;
    if (writer !== undefined) {
      writerEnsureReadyPromiseRejected(writer, reason);
    }
    if (!hasOperationMarkedInFlight(stream) && c.started) {
      writableStreamFinishErroring(stream);
    }
  }

  function writableStreamFinishErroring(stream) {
    stream.state = 'errored';
    resetQueue(stream.controller);
    const storedError = stream.storedError;
    for (const req of stream.writeRequests) {
      req.reject(storedError);
    }
    stream.writeRequests = [];
    const abortRequest = stream.pendingAbortRequest;
    if (abortRequest === undefined) {
      writableStreamRejectCloseAndClosedPromiseIfNeeded(stream);
      return;
    }
    stream.pendingAbortRequest = undefined;
    if (abortRequest.wasAlreadyErroring) {
      abortRequest.d.reject(storedError);
      writableStreamRejectCloseAndClosedPromiseIfNeeded(stream);
      return;
    }
    const c = stream.controller;
    const result = c.abortAlgorithm(abortRequest.reason);
    writableControllerClearAlgorithms(c);
    upon(result, () => {
      abortRequest.d.resolve(undefined);
      writableStreamRejectCloseAndClosedPromiseIfNeeded(stream);
    }, (reason) => {
      abortRequest.d.reject(reason);
      writableStreamRejectCloseAndClosedPromiseIfNeeded(stream);
    });
  }

  function writableStreamFinishInFlightWrite(stream) {
    stream.inFlightWriteRequest.resolve(undefined);
    stream.inFlightWriteRequest = undefined;
  }

  function writableStreamFinishInFlightWriteWithError(stream, error) {
    stream.inFlightWriteRequest.reject(error);
    stream.inFlightWriteRequest = undefined;
    writableStreamDealWithRejection(stream, error);
  }

  function writableStreamFinishInFlightClose(stream) {
    stream.inFlightCloseRequest.resolve(undefined);
    stream.inFlightCloseRequest = undefined;
    if (stream.state === 'erroring') {
      stream.storedError = undefined;
      if (stream.pendingAbortRequest !== undefined) {
        stream.pendingAbortRequest.d.resolve(undefined);
        stream.pendingAbortRequest = undefined;
      }
    }
    stream.state = 'closed';
    if (stream.writer !== undefined) {
      stream.writer.closed.resolve(undefined);
    }
  }

  function writableStreamFinishInFlightCloseWithError(stream, error) {
    stream.inFlightCloseRequest.reject(error);
    stream.inFlightCloseRequest = undefined;
    if (stream.pendingAbortRequest !== undefined) {
      stream.pendingAbortRequest.d.reject(error);
      stream.pendingAbortRequest = undefined;
    }
    writableStreamDealWithRejection(stream, error);
  }

  function writableStreamRejectCloseAndClosedPromiseIfNeeded(stream) {
    if (stream.closeRequest !== undefined) {
      stream.closeRequest.reject(stream.storedError);
      stream.closeRequest = undefined;
    }
    const writer = stream.writer;
    if (writer !== undefined) {
      writer.closed.reject(stream.storedError);
      setHandled(writer.closed.promise);
    }
  }

  function writableStreamUpdateBackpressure(stream, backpressure) {
    const writer = stream.writer;
    if (writer !== undefined && backpressure !== stream.backpressure) {
      if (backpressure) {
        writer.ready = deferred();
      } else {
        writer.ready.resolve(undefined);
      }
    }
    stream.backpressure = backpressure;
  }

  defineClass(WritableStream, {
    abort(reason) {
      const stream = record(this, 'WritableStream', 'WritableStream');
      if (isWritableLocked(stream)) {
        return rejectedWith(new TypeError('cannot abort a locked stream'));
      }
      return writableStreamAbort(stream, reason);
    },
    close() {
      const stream = record(this, 'WritableStream', 'WritableStream');
      if (isWritableLocked(stream)) {
        return rejectedWith(new TypeError('cannot close a locked stream'));
      }
      if (closeQueuedOrInFlight(stream)) {
        return rejectedWith(new TypeError('stream is already closing'));
      }
      return writableStreamClose(stream);
    },
    getWriter() {
      const stream = record(this, 'WritableStream', 'WritableStream');
      const writer = { kind: 'WritableStreamDefaultWriter' };
      setUpWriter(writer, stream);
      return publicObject(WritableStreamDefaultWriter.prototype, writer);
    },
  }, {
    locked() {
      return isWritableLocked(record(this, 'WritableStream', 'WritableStream'));
    },
  });

  // ---- WritableStreamDefaultWriter ----

  function WritableStreamDefaultWriter(stream) {
    if (new.target === undefined) {
      throw new TypeError('WritableStreamDefaultWriter constructor must be called with new');
    }
    if (arguments.length !== 1) {
      throw new TypeError('WritableStreamDefaultWriter takes a single argument');
    }
    const s = typeof stream === 'object' && stream !== null ? slots.get(stream) : undefined;
    if (s === undefined || s.kind !== 'WritableStream') {
      throw new TypeError('WritableStreamDefaultWriter argument must be a WritableStream');
    }
    const writer = { kind: 'WritableStreamDefaultWriter' };
    setUpWriter(writer, s);
    slots.set(this, writer);
    writer.object = this;
  }

  function setUpWriter(writer, stream) {
    if (isWritableLocked(stream)) {
      throw new TypeError('stream is locked');
    }
    writer.stream = stream;
    stream.writer = writer;
    switch (stream.state) {
      case 'writable':
        writer.ready = !closeQueuedOrInFlight(stream) && stream.backpressure ? deferred() : resolvedDeferred(undefined);
        writer.closed = deferred();
        break;
      case 'erroring':
        writer.ready = rejectedDeferred(stream.storedError);
        writer.closed = deferred();
        break;
      case 'closed':
        writer.ready = resolvedDeferred(undefined);
        writer.closed = resolvedDeferred(undefined);
        break;
      default:
        writer.ready = rejectedDeferred(stream.storedError);
        writer.closed = rejectedDeferred(stream.storedError);
    }
  }

  function writerEnsureReadyPromiseRejected(writer, error) {
    if (writer.ready.pending) {
      writer.ready.reject(error);
      setHandled(writer.ready.promise);
    } else {
      writer.ready = rejectedDeferred(error);
    }
  }

  function writerEnsureClosedPromiseRejected(writer, error) {
    if (writer.closed.pending) {
      writer.closed.reject(error);
      setHandled(writer.closed.promise);
    } else {
      writer.closed = rejectedDeferred(error);
    }
  }

  function writerDesiredSize(writer) {
    const stream = writer.stream;
    switch (stream.state) {
      case 'errored':
      case 'erroring':
        return null;
      case 'closed':
        return 0;
    }
    return writableControllerDesiredSize(stream.controller);
  }

  function writerRelease(writer) {
    const stream = writer.stream;
    const released = new TypeError('writer released');
    writerEnsureReadyPromiseRejected(writer, released);
    writerEnsureClosedPromiseRejected(writer, released);
    stream.writer = undefined;
    writer.stream = undefined;
  }

  function writerWrite(writer, chunk) {
    const stream = writer.stream;
    const c = stream.controller;
    const chunkSize = writableControllerGetChunkSize(c, chunk);
    if (stream !== writer.stream) {
      return rejectedWith(new TypeError('writer was released'));
    }
    const state = stream.state;
    if (state === 'errored') {
      return rejectedWith(stream.storedError);
    }
    if (closeQueuedOrInFlight(stream) || state === 'closed') {
      return rejectedWith(new TypeError('stream is closing or closed'));
    }
    if (state === 'erroring') {
      return rejectedWith(stream.storedError);
    }
    const d = deferred();
    stream.writeRequests.push(d);
    writableControllerWrite(c, chunk, chunkSize);
    return d.promise;
  }

  const writerRecord = (w) => record(w, 'WritableStreamDefaultWriter', 'WritableStreamDefaultWriter');

  defineClass(WritableStreamDefaultWriter, {
    abort(reason) {
      const writer = writerRecord(this);
      if (writer.stream === undefined) {
        return rejectedWith(new TypeError('stream is undefined'));
      }
      return writableStreamAbort(writer.stream, reason);
    },
    close() {
      const writer = writerRecord(this);
      const stream = writer.stream;
      if (stream === undefined) {
        return rejectedWith(new TypeError('stream is undefined'));
      }
      if (closeQueuedOrInFlight(stream)) {
        return rejectedWith(new TypeError('stream is already closing'));
      }
      return writableStreamClose(stream);
    },
    releaseLock() {
      const writer = writerRecord(this);
      if (writer.stream !== undefined) {
        writerRelease(writer);
      }
    },
    write(chunk) {
      const writer = writerRecord(this);
      if (writer.stream === undefined) {
        return rejectedWith(new TypeError('stream is undefined'));
      }
      return writerWrite(writer, chunk);
    },
  }, {
    closed() {
      return writerRecord(this).closed.promise;
    },
    desiredSize() {
      const writer = writerRecord(this);
      if (writer.stream === undefined) {
        throw new TypeError('stream is undefined');
      }
      return writerDesiredSize(writer);
    },
    ready() {
      return writerRecord(this).ready.promise;
    },
  });

  // ---- WritableStreamDefaultController ----

  function WritableStreamDefaultController() {
    throw new TypeError('WritableStreamDefaultController is not constructable');
  }

  function writableControllerAdvanceQueueIfNeeded(c) {
    const stream = c.stream;
    if (!c.started || stream.inFlightWriteRequest !== undefined) {
      return;
    }
    if (stream.state === 'erroring') {
      writableStreamFinishErroring(stream);
      return;
    }
    if (c.queue.length === 0) {
      return;
    }
    const value = peekQueueValue(c);
    if (value === closeSentinel) {
      writableControllerProcessClose(c);
    } else {
      writableControllerProcessWrite(c, value);
    }
  }

  function writableControllerClearAlgorithms(c) {
    c.writeAlgorithm = undefined;
    c.closeAlgorithm = undefined;
    c.abortAlgorithm = undefined;
    c.strategySizeAlgorithm = undefined;
  }

  function writableControllerGetChunkSize(c, chunk) {
    if (c.strategySizeAlgorithm === undefined) {
      return 1;
    }
    try {
      return c.strategySizeAlgorithm(chunk);
    } catch (e) {
      writableControllerErrorIfNeeded(c, e);
      return 1;
    }
  }

  const writableControllerDesiredSize = (c) => c.strategyHWM - c.queueTotalSize;
  const writableControllerGetBackpressure = (c) => writableControllerDesiredSize(c) <= 0;

  function writableControllerErrorIfNeeded(c, e) {
    if (c.stream.state === 'writable') {
      writableControllerError(c, e);
    }
  }

  function writableControllerError(c, e) {
    writableControllerClearAlgorithms(c);
    writableStreamStartErroring(c.stream, e);
  }

  function writableControllerProcessClose(c) {
    const stream = c.stream;
    stream.inFlightCloseRequest = stream.closeRequest;
    stream.closeRequest = undefined;
    dequeueValue(c);
    const result = c.closeAlgorithm();
    writableControllerClearAlgorithms(c);
    upon(result, () => writableStreamFinishInFlightClose(stream), (reason) => writableStreamFinishInFlightCloseWithError(stream, reason));
  }

  function writableControllerProcessWrite(c, chunk) {
    const stream = c.stream;
    stream.inFlightWriteRequest = stream.writeRequests.shift();
    upon(c.writeAlgorithm(chunk), () => {
      writableStreamFinishInFlightWrite(stream);
      dequeueValue(c);
      if (!closeQueuedOrInFlight(stream) && stream.state === 'writable') {
        writableStreamUpdateBackpressure(stream, writableControllerGetBackpressure(c));
      }
      writableControllerAdvanceQueueIfNeeded(c);
    }, (reason) => {
      if (stream.state === 'writable') {
        writableControllerClearAlgorithms(c);
      }
      writableStreamFinishInFlightWriteWithError(stream, reason);
    });
  }

  function writableControllerWrite(c, chunk, chunkSize) {
    try {
      enqueueValueWithSize(c, chunk, chunkSize);
    } catch (e) {
      writableControllerErrorIfNeeded(c, e);
      return;
    }
    const stream = c.stream;
    if (!closeQueuedOrInFlight(stream) && stream.state === 'writable') {
      writableStreamUpdateBackpressure(stream, writableControllerGetBackpressure(c));
    }
    writableControllerAdvanceQueueIfNeeded(c);
  }

  defineClass(WritableStreamDefaultController, {
    error(e) {
      const c = record(this, 'WritableStreamDefaultController', 'WritableStreamDefaultController');
      if (c.stream.state === 'writable') {
        writableControllerError(c, e);
      }
    },
  });

  return {
    CountQueuingStrategy,
    ReadableStream,
    ReadableStreamDefaultReader,
    WritableStream,
    WritableStreamDefaultWriter,
  };
})
