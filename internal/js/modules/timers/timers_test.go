package timers_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/timers"
	"github.com/metronome-load/metronome/js/jstest"
)

// The module's timers are the globals' timers: an id from one clears with
// the other, intervals repeat until cleared, and arguments reach the
// callback.
func TestTimersModule(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { setTimeout, clearTimeout, setInterval, clearInterval } from "k6/timers";
import * as timers from "k6/timers";
export default async function () {
	const log = [];
	const cleared = setTimeout(() => log.push("never"), 5);
	globalThis.clearTimeout(cleared);
	const g = globalThis.setTimeout(() => log.push("never2"), 5);
	clearTimeout(g);
	const once = new Promise((resolve) => setTimeout((a, b) => resolve("t:" + a + b), 5, "x", "y"));
	let n = 0;
	const thrice = new Promise((resolve) => {
		const iv = setInterval(() => { n++; log.push("i" + n); if (n === 3) { clearInterval(iv); resolve(); } }, 1);
	});
	log.push(await once);
	await thrice;
	// Anything left uncleared would fire within this wait.
	await new Promise((resolve) => timers.setTimeout(resolve, 20));
	log.sort();
	console.log(log.join(","), n, setTimeout === globalThis.setTimeout && clearInterval === globalThis.clearInterval, typeof timers.clearInterval, Object.keys(timers).sort().join(","));
}`}, nil)
	v, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(v); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	// k6 v2.2.0's namespace of k6/timers has no default key.
	want := "i1,i2,i3,t:xy 3 true function clearInterval,clearTimeout,setInterval,setTimeout source=console"
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
}
