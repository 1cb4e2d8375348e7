// k6/experimental/streams (k6 v2.2): a ReadableStream of chunks read to
// the end through getReader() and through new ReadableStreamDefaultReader
// (also without new, as k6 allows); a source that enqueues in start, one
// that produces in pull on timers, chunks of any type; done after the
// last, reader.closed resolving, locked while a reader holds the stream,
// releaseLock letting another reader read the rest. The module's exports
// and the classes' methods are k6's.
import * as streams from 'k6/experimental/streams';
import { ReadableStream, ReadableStreamDefaultReader, CountQueuingStrategy } from 'k6/experimental/streams';
import { check } from 'k6';

export const options = { iterations: 1 };

function note(label, v) {
  check(null, { [`${label}: ${v}`]: () => true });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

async function readAll(reader) {
  const out = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    out.push(JSON.stringify(value));
  }
}

export default async function () {
  note('exports', Object.keys(streams).sort().join(','));
  note('extras', ['ByteLengthQueuingStrategy', 'TransformStream', 'ReadableStreamBYOBReader', 'ReadableStreamDefaultController']
    .map((n) => `${n}=${typeof streams[n]}`).join(','));

  const rs = new ReadableStream({
    start(c) {
      for (const v of ['a', 1, { k: [true, null] }, [2, 3]]) c.enqueue(v);
      c.close();
    },
  });
  note('methods', ['getReader', 'cancel', 'tee', 'pipeTo', 'pipeThrough', 'values'].map((m) => `${m}=${typeof rs[m]}`).join(','));
  note('locked before', rs.locked);
  const reader = rs.getReader();
  note('locked with a reader', rs.locked);
  note('reader methods', ['read', 'cancel', 'releaseLock'].map((m) => `${m}=${typeof reader[m]}`).join(','));
  note('chunks', (await readAll(reader)).join(' '));
  const after = await reader.read();
  note('read after the end', `${after.done} ${after.value}`);
  note('closed', await reader.closed);
  reader.releaseLock();
  note('locked after release', rs.locked);

  let n = 0;
  const timed = new ReadableStream({
    async pull(c) {
      await tick();
      n++;
      c.enqueue(`chunk ${n}`);
      if (n === 5) c.close();
    },
  });
  const first = new ReadableStreamDefaultReader(timed);
  const one = await first.read();
  const two = await first.read();
  note('first reader', `${one.value}, ${two.value}`);
  first.releaseLock();
  note('second reader', (await readAll(ReadableStreamDefaultReader(timed))).join(' '));

  const empty = new ReadableStream();
  const q = new CountQueuingStrategy({ highWaterMark: 4 });
  note('strategy', `${q.highWaterMark} ${q.size()} ${typeof q.size}`);
  let ctrl;
  const later = ReadableStream({ start(c) { ctrl = c; } }, q);
  note('desiredSize of an empty queue', ctrl.desiredSize);
  const r = later.getReader();
  const pending = r.read();
  ctrl.enqueue('late');
  const late = await pending;
  note('pending read', `${late.done} ${late.value}`);
  ctrl.close();
  const end = await r.read();
  note('after close', `${end.done} ${end.value} ${ctrl.desiredSize}`);
  note('empty stream', typeof empty.getReader().read);
}
