package jsmod_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// A module made with the kit only, the way a module package uses it.
func init() {
	modules.Register("k6/x/jsmodtest", modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		rt := vu.Runtime()
		return modules.Exports{Named: map[string]any{
			"fail": func(c sobek.FunctionCall) sobek.Value {
				jsmod.Throwf(rt, "failed with %d", c.Argument(0).ToInteger())
				return nil
			},
			"named": func(c sobek.FunctionCall) sobek.Value {
				jsmod.Throw(rt, jsmod.Errorf(jsmod.String(rt, c.Argument(0), "the name"), "named error"))
				return nil
			},
			"call": func(c sobek.FunctionCall) sobek.Value {
				fn := jsmod.Function(rt, c.Argument(0), "call's argument")
				v, err := fn(sobek.Undefined())
				if err != nil {
					jsmod.Throw(rt, err)
				}
				return v
			},
			"len": func(c sobek.FunctionCall) sobek.Value {
				b, ok := jsmod.BytesOrString(rt, c.Argument(0))
				if !ok {
					jsmod.ThrowTypeError(rt, "len takes binary data or a string, not %s", jsmod.Describe(c.Argument(0)))
				}
				return rt.ToValue(string(hexOf(b)))
			},
			"int": func(c sobek.FunctionCall) sobek.Value {
				return rt.ToValue(jsmod.Int(rt, c.Argument(0), "n", 0, 10))
			},
			"obj": func(c sobek.FunctionCall) sobek.Value {
				return jsmod.Object(rt, c.Argument(0), "the options").Get("a")
			},
			// later(n) resolves with n*2 from another goroutine, or
			// rejects with an OperationError when n < 0.
			"later": func(c sobek.FunctionCall) sobek.Value {
				n := c.Argument(0).ToInteger()
				return jsmod.Async(vu, func() (func(*sobek.Runtime) (any, error), error) {
					if n < 0 {
						return nil, jsmod.Errorf("OperationError", "negative %d", n)
					}
					return func(rt *sobek.Runtime) (any, error) {
						return rt.NewArrayBuffer([]byte{byte(n * 2)}), nil
					}, nil
				})
			},
			"goFail": func(c sobek.FunctionCall) sobek.Value {
				jsmod.ThrowGoError(rt, "went wrong %d", 7)
				return nil
			},
			// settled(n) is a promise settled at once: resolved with n,
			// or rejected with a GoError when n < 0.
			"settled": func(c sobek.FunctionCall) sobek.Value {
				n := c.Argument(0).ToInteger()
				if n < 0 {
					return jsmod.Settled(rt, nil, jsmod.Errorf(jsmod.GoError, "negative %d", n))
				}
				return jsmod.Settled(rt, n, nil)
			},
			"plainReject": func(c sobek.FunctionCall) sobek.Value {
				p := jsmod.NewPromise(vu)
				go p.Reject(errors.New("plain"))
				return p.Value()
			},
		}}, nil
	}))
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func TestArgumentsAndErrors(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import * as m from "k6/x/jsmodtest";
function caught(f) {
	try { f(); return "no error"; } catch (e) {
		return (e instanceof TypeError ? "T" : e instanceof Error ? "E" : "?") + ":" + e.name + ":" + e.message;
	}
}
export default function () {
	const out = [];
	out.push(m.len("hé"), m.len(new Uint8Array([1, 2, 255]).buffer));
	const big = new Uint8Array([9, 8, 7, 6, 5, 4, 3, 2]);
	out.push(m.len(new Uint8Array(big.buffer, 2, 3)), m.len(new DataView(big.buffer, 6)), m.len(new Uint16Array(big.buffer, 2, 1)));
	out.push(caught(() => m.len([1, 2])), caught(() => m.len(5)));
	out.push(caught(() => m.fail(3)), caught(() => m.named("OperationError")), caught(() => m.named(7)));
	out.push(caught(() => m.call(() => { throw new RangeError("inner"); })), caught(() => m.call(null)));
	out.push(m.int(10), caught(() => m.int(1.5)), caught(() => m.int("3")), caught(() => m.int(11)));
	out.push(m.obj({ a: "A" }), caught(() => m.obj("s")));
	console.log(out.join("|"));
	if (__ITER === 1) m.fail(42);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	want := strings.Join([]string{"68c3a9", "0102ff", "070605", "0302", "0706",
		"T:TypeError:len takes binary data or a string, not an array", "T:TypeError:len takes binary data or a string, not a number",
		"E:Error:failed with 3", "E:OperationError:named error", "T:TypeError:the name must be a string, not a number",
		"E:RangeError:inner", "T:TypeError:call's argument must be a function, not null",
		"10", "T:TypeError:n must be an integer from 0 to 10, not 1.5", "T:TypeError:n must be a number, not a string",
		"T:TypeError:n must be an integer from 0 to 10, not 11",
		"A", "T:TypeError:the options must be an object, not a string"}, "|")
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("got %s\nwant %s", r.Stderr, want)
	}
	// An uncaught error names the script's line and column.
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
		t.Fatalf("second iteration: %v", res.Outcome)
	}
	if !regexp.MustCompile(`Error: failed with 42\n(\tat .*\n)*\tat default \(file://\S+/script\.js:18:26\(\d+\)\)`).MatchString(r.Stderr.String()) {
		t.Fatalf("the error lacks its place: %s", r.Stderr)
	}
}

func TestPromises(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import { later, plainReject } from "k6/x/jsmodtest";
export default async function () {
	const b = await later(21);
	let caught;
	try { await later(-1); } catch (e) { caught = e.name + ":" + e.message + ":" + (e instanceof Error); }
	let plain;
	try { await plainReject(); } catch (e) { plain = e.name + ":" + e.message; }
	console.log("got", new Uint8Array(b)[0], caught, plain);
	if (__ITER === 1) {
		later(-2);
	}
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if want := "got 42 OperationError:negative -1:true Error:plain"; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("got %s\nwant %s", r.Stderr, want)
	}
	// A rejection nobody handles fails the iteration and names the line
	// of the call that made the promise, though it settled later.
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
		t.Fatalf("second iteration: %v: %s", res.Outcome, r.Stderr)
	}
	if !regexp.MustCompile(`Uncaught \(in promise\) OperationError: negative -2\n\tat default \(file://\S+/script\.js:10:8\(\d+\)\)`).MatchString(r.Stderr.String()) {
		t.Fatalf("the rejection lacks its place: %s", r.Stderr)
	}
}

func TestGoErrorAndSettled(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import { goFail, settled } from "k6/x/jsmodtest";
export default async function () {
	let thrown;
	try { goFail(); } catch (e) { thrown = String(e) + ":" + (e instanceof Error); }
	const order = [];
	const p = settled(5).then((v) => order.push("then " + v));
	order.push("sync");
	await p;
	let rejected;
	try { await settled(-1); } catch (e) { rejected = e.name + ":" + e.message; }
	console.log(thrown, order.join(","), rejected);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if want := "GoError: went wrong 7:true sync,then 5 GoError:negative -1"; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("got %s\nwant %s", r.Stderr, want)
	}
}
