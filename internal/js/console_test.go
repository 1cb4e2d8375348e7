package js

import (
	"errors"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

// TestConsoleArg checks console's notation against what k6 v2.2.0 printed
// for the same expressions (k6 run -q, December 2026).
func TestConsoleArg(t *testing.T) {
	rt := sobek.New()
	rt.Set("goErr", errors.New("no value"))
	_, err := rt.RunString(`
		class Pt { constructor() { this.x = 1; this.y = 2; } get z() { return 3; } }
		var circ = { name: "c" }; circ.self = circ; circ.arr = [circ];
		var shared = { v: 1 };
		var isoX = new Date(0); isoX.toISOString = () => "X";
	`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ js, want string }{
		// Top level: primitives as they are, strings unquoted.
		{`"top \"q\"\nline"`, "top \"q\"\nline"},
		{`undefined`, "undefined"},
		{`null`, "null"},
		{`-0`, "0"},
		{`1e21`, "1e+21"},
		{`10n`, "10"},
		{`Symbol("v")`, "v"},
		{`(function g() {})`, "[object Function]"},
		{`new TypeError("tt")`, "TypeError: tt"},
		{`goErr`, "no value"},
		{`new Date(0)`, `"1970-01-01T00:00:00.000Z"`},
		{`new Date(NaN)`, "{}"},
		{`new Map([[1, 2]])`, "{}"},
		{`/x/g`, "{}"},
		{`new String("ab")`, `{ 0: "a", 1: "b" }`},
		{`[]`, "[]"},
		{`{}`, "{}"},
		// Nested values.
		{`({a: 1, b: "x", c: [1, 2, {d: null}], e: undefined, f: function g() {}})`,
			`{ a: 1, b: "x", c: [ 1, 2, { d: null } ], e: null, f: [object Function] }`},
		{`({s: "in \"q\"\nline\t\\"})`, "{ s: \"in \"q\"\nline\t\\\" }"},
		{`({"a-b": 1, "1": 2, "with space": 3, "": 4})`, `{ 1: 2, a-b: 1, with space: 3, : 4 }`},
		{`({n: [-0, NaN, -Infinity, 1e-7, 123456789012345678901234567890]})`, `{ n: [ 0, NaN, -Infinity, 1e-7, 1.2345678901234568e+29 ] }`},
		{`({m: new Map(), d: new Date(0), e: new Error("boom"), b: 10n, t: true})`,
			`{ m: {}, d: "1970-01-01T00:00:00.000Z", e: Error: boom, b: 10, t: true }`},
		{`({p: new Pt()})`, `{ p: { x: 1, y: 2 } }`},
		{`circ`, `{ name: "c", self: [Circular], arr: [ [Circular] ] }`},
		{`({a: shared, b: shared})`, `{ a: { v: 1 }, b: { v: 1 } }`},
		{`({toJSON() { return "J"; }, x: 1})`, `{ toJSON: [object Function], x: 1 }`},
		{`({get g() { return 42; }, [Symbol("s")]: 1, a: Symbol("v")})`, `{ g: 42, a: "v" }`},
		{`Object.defineProperty({}, "hidden", {value: 1, enumerable: false})`, "{}"},
		{`[1, , 3]`, `[ 1, null, 3 ]`},
		{`Object.assign([1, 2], {extra: 3})`, `[ 1, 2 ]`},
		{`Object.assign(new Date(0), {extra: 3})`, `{ extra: 3 }`},
		{`({d: isoX})`, `{ d: { toISOString: [object Function] } }`},
		{`new Uint8Array([1, 2, 255])`, `Uint8Array(3) [ 1, 2, 255 ]`},
		{`new Uint8ClampedArray([1])`, `Uint8Array(1) [ 1 ]`},
		{`({b: new ArrayBuffer(2), f: new Float64Array([1.5]), i: new Int16Array(0), g: new BigInt64Array(1)})`,
			`{ b: ArrayBuffer { [Uint8Contents]: <00 00>, byteLength: 2 }, f: Float64Array(1) [ 1.5 ], i: Int16Array(0) [], g: BigInt64Array(1) [ 0 ] }`},
		{`new Uint8Array([0xab, 0x0f]).buffer`, `ArrayBuffer { [Uint8Contents]: <ab 0f>, byteLength: 2 }`},
		{`new DataView(new ArrayBuffer(2))`, "{}"},
		{`new Proxy([1, 2], {})`, `{ 0: 1, 1: 2 }`},
		{`[[1, [2, [3, [4, [5]]]]]]`, `[ [ 1, [ 2, [ 3, [ 4, [ 5 ] ] ] ] ] ]`},
	} {
		v, err := rt.RunString("(" + c.js + ")")
		if err != nil {
			t.Fatalf("%s: %v", c.js, err)
		}
		if got := consoleArg(v); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.js, got, c.want)
		}
	}
}

// TestConsoleArgLong checks that nothing is cut off or broken into lines,
// however long or deep.
func TestConsoleArgLong(t *testing.T) {
	rt := sobek.New()
	v, err := rt.RunString(`var a = []; for (var i = 0; i < 1000; i++) a.push(i);
		var o = {}; for (var i = 0; i < 200; i++) o = {k: o}; [a, o]`)
	if err != nil {
		t.Fatal(err)
	}
	got := consoleArg(v)
	if !strings.HasPrefix(got, "[ [ 0, 1, 2,") || !strings.Contains(got, "998, 999 ]") ||
		strings.Count(got, "k: ") != 200 || strings.Contains(got, "\n") {
		t.Errorf("got %.200s…", got)
	}
}

// TestConsoleThrows checks that a getter or proxy that throws while its
// object is written makes the console call throw, as in k6.
func TestConsoleThrows(t *testing.T) {
	rt := sobek.New()
	rt.Set("fmt", func(c sobek.FunctionCall) sobek.Value { return rt.ToValue(consoleArg(c.Argument(0))) })
	v, err := rt.RunString(`var out = [];
		try { fmt({a: 1, get b() { throw new Error("getter boom"); }}); } catch (e) { out.push(String(e)); }
		try { fmt(new Proxy({}, {ownKeys() { throw new Error("keys boom"); }})); } catch (e) { out.push(String(e)); }
		out.join("|")`)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "Error: getter boom|Error: keys boom" {
		t.Errorf("caught %q", v)
	}
}
