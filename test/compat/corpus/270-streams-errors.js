// Streams that fail, with k6's messages: controller.error() rejects
// pending and later reads and reader.closed with its reason; a start that
// throws throws from the constructor; a pull that throws or rejects
// errors the stream; enqueue or close after close; a size function's
// bad size; a locked stream; what k6 does not support (byte streams,
// BYOB readers, tee) as GoErrors; a sink whose write fails; arguments
// k6 refuses.
import { ReadableStream, WritableStream, CountQueuingStrategy, ReadableStreamDefaultReader, WritableStreamDefaultWriter } from 'k6/experimental/streams';
import { check } from 'k6';

export const options = { iterations: 1 };

function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : `${typeof e} ${String(e)}`;
}

function note(label, v) {
  check(null, { [`${label}: ${v}`]: () => true });
}

function attempt(label, f) {
  try {
    f();
    note(label, 'ok');
  } catch (e) {
    note(label, `throws ${describe(e)}`);
  }
}

// shown writes a read's result in one order: k6's results are Go maps,
// whose keys come in any order.
function shown(v) {
  return v !== null && typeof v === 'object' && 'done' in v ? `{done: ${v.done}, value: ${JSON.stringify(v.value)}}` : JSON.stringify(v);
}

async function settle(label, p) {
  try {
    note(label, `resolves ${shown(await p)}`);
  } catch (e) {
    note(label, `rejects ${describe(e)}`);
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

export default async function () {
  let c1;
  const r1 = new ReadableStream({ start(c) { c1 = c; } }).getReader();
  const waiting = r1.read();
  c1.error(new TypeError('bad thing'));
  await settle('pending read of an errored stream', waiting);
  await settle('read of an errored stream', r1.read());
  await settle('closed of an errored stream', r1.closed);
  attempt('enqueue into an errored stream', () => c1.enqueue(1));
  note('desiredSize of an errored stream', c1.desiredSize);

  attempt('start throws', () => new ReadableStream({ start() { throw new Error('start failed'); } }));
  const pullThrows = new ReadableStream({ pull() { throw new RangeError('pull failed'); } });
  await tick();
  await settle('read after pull threw', pullThrows.getReader().read());
  const pullRejects = new ReadableStream({ pull() { return Promise.reject('no more'); } });
  await tick();
  await settle('read after pull rejected', pullRejects.getReader().read());

  let c2;
  const closed = new ReadableStream({ start(c) { c2 = c; c.enqueue('last'); c.close(); } });
  attempt('enqueue after close', () => c2.enqueue(1));
  attempt('close after close', () => c2.close());
  const r2 = closed.getReader();
  await settle('the chunk before close', r2.read());
  await settle('then done', r2.read());
  attempt('getReader of a locked stream', () => closed.getReader());
  attempt('a second reader', () => new ReadableStreamDefaultReader(closed));
  await settle('cancel of a locked stream', closed.cancel());

  const badSize = new ReadableStream({ start(c) { try { c.enqueue('x'); } catch (e) { note('enqueue with a negative size', describe(e)); } } }, { size: () => -1 });
  await settle('read after a bad size', badSize.getReader().read());

  attempt('bytes', () => new ReadableStream({ type: 'bytes' }));
  attempt('byob', () => new ReadableStream().getReader({ mode: 'byob' }));
  attempt('mode', () => new ReadableStream().getReader({ mode: 'other' }));
  attempt('tee', () => new ReadableStream().tee());
  attempt('source type', () => new ReadableStream({ type: 'other' }));
  attempt('source not an object', () => new ReadableStream(5));
  attempt('source null', () => new ReadableStream(null));
  attempt('pull not a function', () => new ReadableStream({ pull: 1 }));
  attempt('negative highWaterMark', () => new ReadableStream({}, { highWaterMark: -1 }));
  attempt('string highWaterMark', () => new ReadableStream({}, { highWaterMark: '2' }));
  attempt('size not a function', () => new ReadableStream({}, { size: 1 }));
  attempt('reader of a non-stream', () => new ReadableStreamDefaultReader({}));
  attempt('reader without a stream', () => new ReadableStreamDefaultReader());
  attempt('strategy without highWaterMark', () => new CountQueuingStrategy({}));
  attempt('strategy of a number', () => new CountQueuingStrategy(1));
  attempt('sink type', () => new WritableStream({ type: 'bytes' }));
  attempt('sink not an object', () => new WritableStream(null));
  attempt('write not a function', () => new WritableStream({ write: 1 }));
  attempt('WritableStream without new', () => WritableStream());
  attempt('writer of a non-stream', () => new WritableStreamDefaultWriter({}));

  const failing = new WritableStream({ write(chunk) { if (chunk === 'bad') throw new Error('sink failed'); } });
  const w = failing.getWriter();
  await settle('a good write', w.write('good'));
  await settle('a failing write', w.write('bad'));
  await settle('a write after the failure', w.write('more'));
  await settle('ready after the failure', w.ready);
  await settle('closed after the failure', w.closed);
  note('desiredSize after the failure', w.desiredSize);
  await settle('close after the failure', w.close());

  const done = new WritableStream().getWriter();
  await done.close();
  await settle('write after close', done.write(1));
  await settle('close twice', done.close());
  attempt('getWriter of a locked stream', () => new WritableStreamDefaultWriter(failing));
}
