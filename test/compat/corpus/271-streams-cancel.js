// Cancelling: reader.cancel(reason) and stream.cancel(reason) hand the
// reason to the source's cancel, drop what was queued, and later reads
// are done; a cancel that throws rejects with its error; releasing a
// reader rejects its pending read; a WritableStream aborted with a reason
// lets the write in flight finish, then rejects the queued ones with it
// and calls the sink's abort.
import { ReadableStream, WritableStream } from 'k6/experimental/streams';
import { check } from 'k6';

export const options = { iterations: 1 };

function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : `${typeof e} ${String(e)}`;
}

function note(label, v) {
  check(null, { [`${label}: ${v}`]: () => true });
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
  const reasons = [];
  let pulls = 0;
  const rs = new ReadableStream({
    start(c) { c.enqueue('queued 1'); c.enqueue('queued 2'); },
    pull() { pulls++; },
    cancel(reason) { reasons.push(JSON.stringify(reason)); },
  }, { highWaterMark: 2 });
  const r = rs.getReader();
  await settle('first read', r.read());
  await settle('reader.cancel', r.cancel({ why: 'enough' }));
  await settle('read after cancel', r.read());
  await settle('closed after cancel', r.closed);
  await settle('cancel again', r.cancel('again'));
  note('source cancel got', reasons.join(' | '));

  const unlocked = new ReadableStream({ cancel(reason) { reasons.push(`stream ${reason}`); } });
  await settle('stream.cancel', unlocked.cancel('bye'));
  await settle('read of a cancelled stream', unlocked.getReader().read());
  note('source cancel got', reasons.join(' | '));

  const throwing = new ReadableStream({ cancel() { throw new Error('cannot cancel'); } });
  await settle('cancel that throws', throwing.cancel());
  const rejecting = new ReadableStream({ cancel() { return Promise.reject(new TypeError('refused')); } });
  await settle('cancel that rejects', rejecting.cancel());

  const slow = new ReadableStream({ pull() { return new Promise(() => {}); } });
  const sr = slow.getReader();
  const pending = sr.read();
  sr.releaseLock();
  await settle('pending read after releaseLock', pending);
  await settle('read of a released reader', sr.read());
  await settle('closed of a released reader', sr.closed);
  await settle('cancel of a released reader', sr.cancel());
  note('stream locked after release', slow.locked);

  const sinkLog = [];
  const ws = new WritableStream({
    write(chunk) { sinkLog.push(`write ${chunk}`); return new Promise((resolve) => setTimeout(resolve, 20)); },
    abort(reason) { sinkLog.push(`abort ${reason}`); },
  });
  const w = ws.getWriter();
  const first = w.write('a');
  const second = w.write('b');
  await tick();
  const aborted = w.abort('stop');
  note('sink right after abort', sinkLog.join(', '));
  await settle('the write in flight at abort', first);
  await settle('the write queued at abort', second);
  await settle('abort', aborted);
  note('sink after abort', sinkLog.join(', '));
  await settle('write after abort', w.write('c'));
  await settle('writer.closed after abort', w.closed);
  await settle('ready after abort', w.ready);

  const quick = new WritableStream({ abort(reason) { sinkLog.push(`quick abort ${reason}`); } });
  await settle('abort of an idle stream', quick.abort('now'));
  note('sink', sinkLog.join(', '));
  const qw = quick.getWriter();
  await settle('write to an aborted stream', qw.write(1));
  qw.releaseLock();
  await settle('write of a released writer', qw.write(1));
  try { note('desiredSize of a released writer', qw.desiredSize); } catch (e) { note('desiredSize of a released writer', describe(e)); }
  await settle('closed of a released writer', qw.closed);
}
