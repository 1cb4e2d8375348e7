// Backpressure: a ReadableStream pulls until its queue holds highWaterMark
// chunks (by count, or by a size function), and again as reads take them;
// a WritableStream's writer sees desiredSize fall with queued writes and
// ready wait until the sink has caught up. Read at settled moments (after
// a timer), where k6 and the standard agree.
import { ReadableStream, WritableStream, CountQueuingStrategy } from 'k6/experimental/streams';
import { check } from 'k6';

export const options = { iterations: 1 };

function note(label, v) {
  check(null, { [`${label}: ${v}`]: () => true });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

export default async function () {
  let pulls = 0;
  let ctrl;
  const rs = new ReadableStream({
    start(c) { ctrl = c; },
    pull(c) { pulls++; c.enqueue(pulls); },
  }, { highWaterMark: 3 });
  note('pulls before start settles', pulls);
  await tick();
  note('filled', `${pulls} pulls, desiredSize ${ctrl.desiredSize}`);
  const reader = rs.getReader();
  const got = [];
  for (let i = 0; i < 2; i++) got.push((await reader.read()).value);
  await tick();
  note('after two reads', `read ${got}, ${pulls} pulls, desiredSize ${ctrl.desiredSize}`);

  let sized = 0;
  let sctrl;
  const bySize = new ReadableStream({
    start(c) { sctrl = c; },
    pull(c) { sized++; c.enqueue('x'.repeat(sized)); },
  }, { highWaterMark: 5, size: (chunk) => chunk.length });
  await tick();
  note('by size', `${sized} pulls, desiredSize ${sctrl.desiredSize}`);

  let zero = 0;
  const lazy = new ReadableStream({ pull(c) { zero++; c.enqueue(zero); } }, new CountQueuingStrategy({ highWaterMark: 0 }));
  await tick();
  note('highWaterMark 0 before a read', zero);
  const lr = lazy.getReader();
  note('read from highWaterMark 0', (await lr.read()).value);
  await tick();
  note('highWaterMark 0 after a read', zero);

  const sinkLog = [];
  const pending = [];
  const ws = new WritableStream({
    write(chunk) { sinkLog.push(`write ${chunk}`); return new Promise((resolve) => pending.push(resolve)); },
    close() { sinkLog.push('close'); },
  }, new CountQueuingStrategy({ highWaterMark: 2 }));
  const w = ws.getWriter();
  const sizes = [w.desiredSize];
  const writes = [1, 2, 3].map((v) => { const p = w.write(v); sizes.push(w.desiredSize); return p; });
  note('desiredSize as writes queue', sizes.join(' '));
  let ready = false;
  w.ready.then(() => { ready = true; });
  await tick();
  note('while the sink is busy', `${sinkLog.join(', ')}; ready ${ready}; desiredSize ${w.desiredSize}`);
  pending.shift()();
  await writes[0];
  await tick();
  note('after one write', `${sinkLog.join(', ')}; ready ${ready}; desiredSize ${w.desiredSize}`);
  pending.shift()();
  await tick();
  note('after two writes', `ready ${ready}; desiredSize ${w.desiredSize}`);
  pending.shift()();
  await Promise.all(writes);
  await w.close();
  note('closed', `${sinkLog.join(', ')}; desiredSize ${w.desiredSize}; ${await w.closed}`);
}
