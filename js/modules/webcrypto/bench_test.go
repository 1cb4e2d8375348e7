package webcrypto_test

import (
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
)

// BenchmarkSubtle measures one awaited subtle operation, the round trip
// through a goroutine and the event loop included: each iteration awaits
// 100 of them.
func BenchmarkSubtle(b *testing.B) {
	for _, bc := range []struct{ name, setup, op string }{
		{"digest-SHA-256-1KiB", "", `await s.digest("SHA-256", data)`},
		{"sign-HMAC-SHA-256-1KiB", `const k = await s.importKey("raw", new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);`,
			`await s.sign("HMAC", k, data)`},
		{"encrypt-AES-GCM-1KiB", `const k = await s.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["encrypt"]); const iv = new Uint8Array(12);`,
			`await s.encrypt({ name: "AES-GCM", iv }, k, data)`},
		{"sign-ECDSA-P-256", `const k = (await s.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"])).privateKey;`,
			`await s.sign({ name: "ECDSA", hash: "SHA-256" }, k, data)`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := jstest.Load(b, map[string]string{"script.js": `const s = crypto.subtle; const data = new Uint8Array(1024);
export default async function () { ` + bc.setup + ` for (let i = 0; i < 100; i++) { ` + bc.op + `; } }`}, nil)
			vu, _ := r.NewVU(b, 1)
			b.ResetTimer()
			for b.Loop() {
				if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
					b.Fatalf("%v: %s", res.Outcome, r.Stderr)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100/1000, "µs/op-in-js")
		})
	}
}
