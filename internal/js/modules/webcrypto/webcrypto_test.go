package webcrypto_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/webcrypto"
	"github.com/metronome-load/metronome/js/jstest"
)

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSameAsK6 runs the probe k6 v2.2.0 ran and compares every result
// with k6's recorded one. The lines below differ on purpose; for those
// metronome's own result is checked instead.
func TestSameAsK6(t *testing.T) {
	got, want := jstest.Probe(t, "k6webcrypto")
	differs := map[string]string{
		// k6 throws GoErrors; these are WebCrypto's names.
		"grv too big": "grv too big !! QuotaExceededError",
		"grv float":   "grv float !! TypeMismatchError",
		"grv AB":      "grv AB !! TypeMismatchError",
		// k6 rejects with a bare string.
		"digest str": "digest str !! TypeError",
		// k6's algorithm object carries internal members.
		"ecdh gen 521": `ecdh gen 521 => {"name":"ECDH","namedCurve":"P-521"}`,
		// WebCrypto lets a null length derive the whole secret; k6 refuses.
		"derive ecdh null": "derive ecdh null => 32",
		// JWKs carry key_ops, ext and (RSA) alg, as WebCrypto and node's do.
		"ec export raw": `ec export raw => [65,"crv,d,ext,key_ops,kty,x,y","EC","P-256",["sign"],true,91,138]`,
		"rsa export":    `rsa export => ["alg,d,dp,dq,e,ext,key_ops,kty,n,p,q,qi","RS256",["sign"],"alg,e,ext,key_ops,kty,n","RS256",["verify"],162]`,
		// k6's name is its own; WebCrypto has no ImplementationError.
		"import bad format": "import bad format !! NotSupportedError",
	}
	for i, w := range want {
		g := got[i]
		name, _, _ := strings.Cut(w, " => ")
		name, _, _ = strings.Cut(name, " !! ")
		if d, ok := differs[name]; ok {
			if g != d {
				t.Errorf("got  %s\nwant %s (a known difference from k6's %s)", g, d, w)
			}
			continue
		}
		if strings.HasPrefix(name, "export ") && strings.HasSuffix(name, " jwk") {
			// k6 orders JWK members at random: compare as objects.
			if !sameJSON(strings.TrimPrefix(g, name+" => "), strings.TrimPrefix(w, name+" => ")) {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			continue
		}
		if g != w {
			t.Errorf("got  %s\nwant %s", g, w)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// TestNodeInterop imports keys node's WebCrypto made (node-fixtures.json)
// and checks that metronome verifies node's signatures, decrypts node's
// ciphertexts, derives node's ECDH secrets, encrypts AES as node does and
// exports node's keys unchanged. With node on PATH, node also verifies what
// metronome signed and decrypts what it encrypted.
func TestNodeInterop(t *testing.T) {
	var checks []string
	files := map[string]string{
		"script.js":          readFile(t, "interop.js"),
		"node-fixtures.json": readFile(t, "node-fixtures.json"),
	}
	r := jstest.Logged(t, files, "CHECKS", &checks)
	if len(checks) != 62 {
		t.Errorf("%d checks ran, want 62", len(checks))
	}
	for _, c := range checks {
		if !strings.HasSuffix(c, " ok") {
			t.Error(c)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the node-side check is skipped")
	}
	m := regexp.MustCompile(`MADE (\{.*?\})(?: source=console)?\n`).FindStringSubmatch(r.Stderr.String())
	if m == nil {
		t.Fatalf("no MADE line: %s", r.Stderr)
	}
	made := filepath.Join(t.TempDir(), "made.json")
	if err := os.WriteFile(made, []byte(m[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "testdata/node-verify.js", "testdata/node-fixtures.json", made).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 9 {
		t.Fatalf("node checked %d things, want 9:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " true") {
			t.Errorf("node disagrees: %s", l)
		}
	}
}

// TestVectors checks published vectors: FIPS 180 (SHA), RFC 4231 (HMAC),
// SP 800-38A (AES-CBC, AES-CTR), the GCM specification's test case 4 and
// RFC 6070 (PBKDF2).
func TestVectors(t *testing.T) {
	var got []any
	jstest.Logged(t, map[string]string{"script.js": `
const s = crypto.subtle;
const bytes = (h) => new Uint8Array(h.match(/../g).map((x) => parseInt(x, 16)));
const hex = (b) => Array.from(new Uint8Array(b)).map((x) => x.toString(16).padStart(2, "0")).join("");
const ascii = (str) => new Uint8Array(Array.from(str).map((c) => c.charCodeAt(0)));
export default async function () {
	const out = [];
	out.push(hex(await s.digest("SHA-256", ascii("abc"))));
	out.push(hex(await s.digest({ name: "SHA-512" }, ascii("abc"))).slice(0, 32));
	const hk = await s.importKey("raw", ascii("Jefe"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
	out.push(hex(await s.sign("HMAC", hk, ascii("what do ya want for nothing?"))));
	const key = bytes("2b7e151628aed2a6abf7158809cf4f3c");
	const pt = bytes("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
	const cbc = await s.importKey("raw", key, "AES-CBC", false, ["encrypt"]);
	out.push(hex(await s.encrypt({ name: "AES-CBC", iv: bytes("000102030405060708090a0b0c0d0e0f") }, cbc, pt)).slice(0, 64));
	const ctr = await s.importKey("raw", key, "AES-CTR", false, ["encrypt"]);
	out.push(hex(await s.encrypt({ name: "AES-CTR", counter: bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), length: 128 }, ctr, pt)));
	const gk = await s.importKey("raw", bytes("feffe9928665731c6d6a8f9467308308"), "AES-GCM", false, ["encrypt", "decrypt"]);
	const gp = { name: "AES-GCM", iv: bytes("cafebabefacedbaddecaf888"), additionalData: bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2") };
	const gpt = bytes("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
	const gct = await s.encrypt(gp, gk, gpt);
	out.push(hex(gct));
	out.push(hex(await s.decrypt(gp, gk, gct)) === hex(gpt));
	const pw = await s.importKey("raw", ascii("password"), "PBKDF2", false, ["deriveBits"]);
	out.push(hex(await s.deriveBits({ name: "PBKDF2", salt: ascii("salt"), iterations: 2, hash: "SHA-1" }, pw, 160)));
	out.push(hex(await s.deriveBits({ name: "PBKDF2", salt: ascii("salt"), iterations: 1000, hash: "SHA-256" }, pw, 256)));
	console.log("RESULT " + JSON.stringify(out));
}`}, "RESULT", &got)
	want := []any{
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"ddaf35a193617abacc417349ae204131",
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2",
		"874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
		"42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47",
		true,
		"ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957",                         // RFC 6070
		"632c2812e46d4604102ba7618e9d6d7d2f8128f6266b4a03264d2a0460b7dcb3", // node's WebCrypto
	}
	gs, _ := json.Marshal(got)
	ws, _ := json.Marshal(want)
	if string(gs) != string(ws) {
		t.Fatalf("got\n%s\nwant\n%s", gs, ws)
	}
}

// TestGlobal checks crypto is a global from the init context on, and that
// a failed operation names the script's line though it fails later, on the
// event loop.
func TestGlobal(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `const id = crypto.randomUUID();
const ids = new Set();
for (let i = 0; i < 100; i++) ids.add(crypto.randomUUID());
export default async function () {
	if (__ITER === 0) {
		const a = crypto.getRandomValues(new Uint8Array(64));
		const b = crypto.getRandomValues(new Uint32Array(new ArrayBuffer(40), 8, 4));
		console.log("init", /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id), ids.size,
			a.some((x) => x !== 0), new Uint8Array(b.buffer, 0, 8).every((x) => x === 0), "crypto" in globalThis);
		return;
	}
	if (__ITER === 1) {
		await crypto.subtle.digest("SHA-3", new Uint8Array(1));
	}
	console.log("still", typeof crypto.subtle.sign);
}`}, nil)
	vu, _ := r.NewVU(t, 1)
	want := []executor.Outcome{executor.Completed, executor.Failed, executor.Completed}
	for i, w := range want {
		if res := jstest.Iterate(vu); res.Outcome != w {
			t.Fatalf("iteration %d: %v, want %v: %s", i, res.Outcome, w, r.Stderr)
		}
	}
	out := r.Stderr.String()
	for _, w := range []string{
		"init true 100 true true true",
		"Uncaught (in promise) NotSupportedError: algorithm \"SHA-3\" is not supported for digest\n\tat default (file://",
		"/script.js:13:29(",
		"still function",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
