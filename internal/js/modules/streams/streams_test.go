package streams_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/streams"
	_ "github.com/metronome-load/metronome/internal/js/modules/timers"
	"github.com/metronome-load/metronome/js/jstest"
)

// run runs one iteration of a script that imports the module's classes
// and returns what it logged, failing the test when the iteration does
// not complete.
func run(t *testing.T, body string) []string {
	t.Helper()
	r := jstest.Load(t, map[string]string{"script.js": `
import { ReadableStream, ReadableStreamDefaultReader, WritableStream, WritableStreamDefaultWriter, CountQueuingStrategy } from "k6/experimental/streams";
const log = (...a) => console.log(a.join(" "));
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const why = (e) => e instanceof Error ? e.name + ": " + e.message : String(e);
export default async function () {
` + body + `
}`}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	return r.Console()
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logged\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// The steps run in the standard's order on the VU's microtask queue:
// start now, the first pull once start's promise settled, each further
// pull once the previous one's promise settled, interleaved with the
// script's own promise callbacks. (k6 v2.2.0 runs them early, an artefact
// of its Go binding; docs/k6-compatibility.md says so.)
func TestMicrotaskOrder(t *testing.T) {
	got := run(t, `
	let n = 0;
	const rs = new ReadableStream({
		start(c) { log("start", c.desiredSize); },
		pull(c) { log("pull", c.desiredSize); c.enqueue(n++); },
	}, { highWaterMark: 2 });
	log("constructed");
	Promise.resolve().then(() => log("tick 1")).then(() => log("tick 2")).then(() => log("tick 3"));
	await tick();
	const r = rs.getReader();
	const { value } = await r.read();
	log("read", value);
	await tick();
	log("pulls", n);`)
	expect(t, got, "start 2", "constructed", "pull 2", "tick 1", "pull 1", "tick 2", "tick 3",
		"pull 1", "read 0", "pulls 3")
}

// Rejections nobody waits for inside a stream (an errored stream's
// closed promise, an aborted writer's ready) do not fail the iteration,
// as the standard marks them handled.
func TestInternalRejectionsAreHandled(t *testing.T) {
	got := run(t, `
	let c;
	const rs = new ReadableStream({ start(ctrl) { c = ctrl; } });
	const r = rs.getReader();
	c.error(new Error("x"));
	r.releaseLock();
	const ws = new WritableStream({ write() { throw new Error("sink"); } });
	const w = ws.getWriter();
	w.write(1).catch(() => {});
	await tick();
	w.releaseLock();
	const ws2 = new WritableStream();
	ws2.getWriter().abort("y");
	await tick();
	log("completed");`)
	expect(t, got, "completed")
}

// A writer's close waits for queued writes and resolves ready under
// backpressure; releaseLock rejects ready and closed with "writer
// released"; controller.error() errors the stream; a size function that
// throws errors it; an abort during close waits for the close.
func TestWritableDetails(t *testing.T) {
	got := run(t, `
	const order = [];
	let release;
	const ws = new WritableStream({
		write(ch) { order.push("write " + ch); return new Promise((r) => { release = r; }); },
		close() { order.push("close"); },
	}, new CountQueuingStrategy({ highWaterMark: 1 }));
	const w = ws.getWriter();
	w.write("a");
	log("ready pending", await Promise.race([w.ready.then(() => "resolved"), tick().then(() => "pending")]));
	const closing = w.close();
	log("ready after close", await Promise.race([w.ready.then(() => "resolved"), tick().then(() => "pending")]));
	release();
	await closing;
	log("order", order.join(", "));

	const w2 = new WritableStream().getWriter();
	w2.releaseLock();
	for (const p of [w2.ready, w2.closed]) await p.then(() => log("resolved"), (e) => log(why(e)));

	let ctrl;
	const w3 = new WritableStream({ start(c) { ctrl = c; } }).getWriter();
	ctrl.error(new RangeError("from the controller"));
	await w3.write(1).then(() => log("written"), (e) => log("write", why(e)));
	log("desiredSize", w3.desiredSize);

	const w4 = new WritableStream({}, { size() { throw new TypeError("no size"); } }).getWriter();
	await w4.write(1).then(() => log("written"), (e) => log("write", why(e)));

	let finish;
	const ws5 = new WritableStream({ close() { return new Promise((r) => { finish = r; }); } });
	const w5 = ws5.getWriter();
	const closed5 = w5.close();
	await tick();
	const aborted5 = w5.abort("late");
	finish();
	log("close", await closed5, "abort", await aborted5);
	log("new WritableStreamDefaultWriter", new WritableStreamDefaultWriter(new WritableStream()).desiredSize);`)
	expect(t, got,
		"ready pending pending",
		"ready after close resolved",
		"order write a, close",
		"TypeError: writer released", "TypeError: writer released",
		"write RangeError: from the controller",
		"desiredSize ",
		"write TypeError: no size",
		"close  abort ",
		"new WritableStreamDefaultWriter 1")
}

// A chunk enqueued while a read waits goes straight to it, whatever the
// queue's size says; a controller error after close is ignored; cancel
// after an error rejects with it; a reader made on a closed or errored
// stream has closed settled accordingly.
func TestReadableDetails(t *testing.T) {
	got := run(t, `
	let c;
	const rs = new ReadableStream({ start(ctrl) { c = ctrl; } }, { highWaterMark: 0, size() { return 100; } });
	const r = rs.getReader();
	const p = r.read();
	c.enqueue("direct");
	log("direct", (await p).value, c.desiredSize);
	c.close();
	c.error(new Error("ignored"));
	log("done", (await r.read()).done);
	r.releaseLock();
	await new ReadableStreamDefaultReader(rs).closed.then((v) => log("closed", v));

	let c2;
	const errored = new ReadableStream({ start(ctrl) { c2 = ctrl; } });
	c2.error("broken");
	await errored.cancel().then(() => log("cancelled"), (e) => log("cancel", why(e)));
	await errored.getReader().closed.then(() => log("closed"), (e) => log("closed", why(e)));
	log("toString", String(errored), Object.prototype.toString.call(errored));`)
	expect(t, got, "direct direct 0", "done true", "closed ", "cancel broken", "closed broken",
		"toString [object Object] [object Object]")
}
