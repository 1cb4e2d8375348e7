package encoding_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/encoding"
	"github.com/metronome-load/metronome/js/jstest"
)

func TestBase64(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import encoding, { b64encode, b64decode } from "k6/encoding";
export default function () {
	const out = [];
	out.push(b64encode("hello?>"), b64encode("hello?>", "rawstd"), b64encode("hello?>", "url"), b64encode("hello?>", "rawurl"));
	out.push(b64decode("aGVsbG8/Pg==", "std", "s"), b64decode("aGVsbG8_Pg", "rawurl", "s"));
	const bytes = new Uint8Array([0, 1, 254, 255, 128]);
	for (const enc of ["std", "rawstd", "url", "rawurl"]) {
		const back = new Uint8Array(b64decode(b64encode(bytes.buffer, enc), enc));
		out.push(enc + "=" + Array.from(back).join("."));
	}
	out.push(encoding.b64decode(encoding.b64encode("日本語 ✓"), "std", "s"));
	out.push(b64decode("aGk=") instanceof ArrayBuffer);
	console.log(out.join("|"));
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	want := "aGVsbG8/Pg==|aGVsbG8/Pg|aGVsbG8_Pg==|aGVsbG8_Pg|hello?>|hello?>|" +
		"std=0.1.254.255.128|rawstd=0.1.254.255.128|url=0.1.254.255.128|rawurl=0.1.254.255.128|日本語 ✓|true"
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("got %s\nwant %s", r.Stderr, want)
	}
}

func TestBase64Errors(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { b64encode, b64decode } from "k6/encoding";
export default function () {
	if (__ITER === 0) b64decode("***");
	if (__ITER === 1) b64encode("x", "base32");
	if (__ITER === 2) b64encode({});
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	for i := range 3 {
		if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
			t.Fatalf("iteration %d: %v", i, res.Outcome)
		}
	}
	for _, want := range []string{"not valid base64", `unknown encoding "base32"`, "must be a string or an ArrayBuffer"} {
		if !strings.Contains(r.Stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}
