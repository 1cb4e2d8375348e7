package textencoding_test

import (
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/metronome-load/metronome/internal/js/modules/textencoding"
	"github.com/metronome-load/metronome/js/jstest"
)

// run runs script once and returns what it logged after "RESULT ".
func run(t *testing.T, script string) []string {
	t.Helper()
	var out []string
	jstest.Logged(t, map[string]string{"script.js": script}, "RESULT", &out)
	return out
}

// TestSameAsK6 runs the probe k6 v2.2.0 ran: every value must be k6's,
// every error k6 threw must be thrown here with the same name.
func TestSameAsK6(t *testing.T) {
	got, want := jstest.Probe(t, "k6text")
	for i, w := range want {
		if name, kind, thrown := strings.Cut(w, " !! "); thrown {
			errName, _, _ := strings.Cut(kind, ":")
			if !strings.HasPrefix(got[i], name+" !! "+errName+":") {
				t.Errorf("got  %s\nwant %s", got[i], w)
			}
			continue
		}
		if got[i] != w {
			t.Errorf("got  %s\nwant %s", got[i], w)
		}
	}
}

// TestRoundTrips checks encoding and decoding against Go's UTF-8 and
// UTF-16 for text with characters of every length, streamed byte by byte.
func TestRoundTrips(t *testing.T) {
	got := run(t, `export default function () {
	const text = "aé✓😀z";
	const b = new TextEncoder().encode(text);
	const d = new TextDecoder();
	let streamed = "";
	for (const x of b) streamed += d.decode(new Uint8Array([x]), { stream: true });
	streamed += d.decode();
	const le = new Uint8Array([0xff, 0xfe, 0x61, 0, 0x3d, 0xd8, 0x00, 0xde]);
	const d16 = new TextDecoder("utf-16le");
	let s16 = "";
	for (const x of le) s16 += d16.decode(new Uint8Array([x]), { stream: true });
	const out = [Array.from(b).join("."), streamed === text ? "yes" : "no: " + streamed, s16 + d16.decode(),
		new TextDecoder("utf-16be").decode(new Uint8Array([0, 0x61, 0xd8, 0x3d])),
		new TextDecoder().decode(new Uint8Array([0xef, 0xbf, 0xbd])),
		(() => { try { new TextDecoder("utf-16le", { fatal: true }).decode(new Uint8Array([0x3d, 0xd8])); return "no error"; } catch (e) { return e.name; } })()];
	console.log("RESULT " + JSON.stringify(out));
}`)
	want := []string{"97.195.169.226.156.147.240.159.152.128.122", "yes", "a😀", "a\ufffd", "\ufffd", "TypeError"}
	gs, _ := json.Marshal(got)
	ws, _ := json.Marshal(want)
	if string(gs) != string(ws) {
		t.Fatalf("got  %s\nwant %s", gs, ws)
	}
}
