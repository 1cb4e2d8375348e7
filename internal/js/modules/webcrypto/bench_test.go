package webcrypto_test

import (
	"runtime"
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

// BenchmarkVUHeap reports what the crypto global costs a VU that uses it
// (KB/VU), against the same script without it: the object is made only
// when a script first reads crypto.
func BenchmarkVUHeap(b *testing.B) {
	for _, bc := range []struct{ name, use string }{
		{"without-crypto", `const id = String(__VU);`},
		{"with-crypto", `const id = crypto.randomUUID(); const s = crypto.subtle;`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := jstest.Load(b, map[string]string{"script.js": bc.use + `
export default function () {}`}, nil)
			const n = 200
			var perVU float64
			for b.Loop() {
				vus := make([]executor.VU, 0, n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range n {
					vu, _ := r.NewVU(b, uint64(i+1))
					vus = append(vus, vu)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perVU = float64(after.HeapAlloc-before.HeapAlloc) / n / 1024
				runtime.KeepAlive(vus)
			}
			b.ReportMetric(perVU, "KB/VU")
		})
	}
}
