package crypto_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	_ "github.com/metronome-load/metronome/internal/js/modules/crypto"
	"github.com/metronome-load/metronome/js/jstest"
)

// run runs script once and returns what it logged after "RESULT ".
func run(t *testing.T, script string) []string {
	t.Helper()
	var out []string
	jstest.Logged(t, map[string]string{"script.js": script}, "RESULT", &out)
	return out
}

// TestSameAsK6 runs the probe script k6 v2.2.0 ran and compares each
// result with k6's recorded one: every value k6 returned must be
// identical, every call k6 refused must throw here too (the message is
// metronome's own). metronome also hashes a Uint16Array and a DataView,
// which k6 refuses; those are checked against crypto/sha256.
func TestSameAsK6(t *testing.T) {
	got, want := jstest.Probe(t, "k6crypto")
	sum := func(b []byte) string { s := sha256.Sum256(b); return `string:"` + hex.EncodeToString(s[:]) + `"` }
	extra := map[string]string{
		"sha256 U16": sum([]byte{1, 0, 2, 0}), // little-endian, as the machine stores it
		"sha256 DV":  sum([]byte{1, 2, 3}),
	}
	for i, w := range want {
		g := got[i]
		name, _, refused := strings.Cut(w, " !! ")
		switch {
		case extra[name] != "":
			if g != name+" => "+extra[name] {
				t.Errorf("%s: got %s, want %s", name, g, extra[name])
			}
		case refused:
			if !strings.HasPrefix(g, name+" !! ") {
				t.Errorf("k6 refused %q (%s) but metronome gave %s", name, w, g)
			}
		case g != w:
			t.Errorf("got  %s\nwant %s", g, w)
		}
	}
}

// TestVectors checks published test vectors: RFC 1320 (md4), RFC 1321
// (md5), FIPS 180 examples, the RIPEMD-160 paper and RFC 4231 (HMAC).
func TestVectors(t *testing.T) {
	got := run(t, `import crypto from "k6/crypto";
export default function () {
	const out = [
		crypto.md4("abc", "hex"), crypto.md4("message digest", "hex"),
		crypto.md5("abc", "hex"),
		crypto.sha1("abc", "hex"),
		crypto.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "hex"),
		crypto.sha384("abc", "hex"),
		crypto.sha512_224("abc", "hex"), crypto.sha512_256("abc", "hex"),
		crypto.ripemd160("abc", "hex"), crypto.ripemd160("", "hex"),
		crypto.hmac("sha256", "Jefe", "what do ya want for nothing?", "hex"),
		crypto.hmac("sha512", "Jefe", "what do ya want for nothing?", "base64rawurl"),
	];
	const h = crypto.createHMAC("sha384", "Jefe");
	h.update("what do ya want ");
	h.update(new Uint8Array([102, 111, 114, 32, 110, 111, 116, 104, 105, 110, 103, 63]));
	out.push(h.digest("hex"));
	console.log("RESULT " + JSON.stringify(out));
}`)
	want := []string{
		"a448017aaf21d8525fc10ae87aa6729d", "d9130a8164549fe818874806e1c7014b",
		"900150983cd24fb0d6963f7d28e17f72",
		"a9993e364706816aba3e25717850c26c9cd0d89d",
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
		"4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa", "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23",
		"8eb208f7e05d987a9b044a8e98c6b087f15a0bfc", "9c1185a5c5e9fc54612808977ee8f548b2258d31",
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"Fkt6e_z4GeLjlfvnO1bgo4e9ZCIugx_WECcM1-olBVSXWL91wFqZSm0DT2X48Ob9yuqxo01Ka0tjbgcKOLznNw",
		"af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrorsNameTheCall(t *testing.T) {
	got := run(t, `import { sha256, createHash, randomBytes } from "k6/crypto";
export default function () {
	const out = [];
	for (const f of [() => sha256("x"), () => createHash("sha3"), () => sha256(5, "hex"), () => randomBytes(0)]) {
		try { f(); out.push("no error"); } catch (e) { out.push(e.message); }
	}
	console.log("RESULT " + JSON.stringify(out));
}`)
	want := []string{
		`sha256: invalid output encoding ""; use hex, base64, base64url, base64rawurl or binary`,
		"createHash: invalid algorithm sha3; use md4, md5, sha1, sha256, sha384, sha512, sha512_224, sha512_256 or ripemd160",
		"sha256: the input must be a string, an ArrayBuffer or a typed array, not a number",
		"randomBytes: invalid size 0; it must be a positive number of bytes",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
