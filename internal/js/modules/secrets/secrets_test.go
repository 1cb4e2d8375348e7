package secrets_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/internal/js/modules/secrets"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/secrets"
)

// get and source().get resolve with the secret, reject with k6's bare
// message, and every log line the VU writes hides what was fetched,
// including the error that ends the iteration.
func TestGetAndRedaction(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(p, []byte("token=tok-123\nunused=never-read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := secrets.Parse([]string{"file=name=main,filename=" + p})
	if err != nil {
		t.Fatal(err)
	}
	r := jstest.Load(t, map[string]string{
		"script.js": `import secrets from "k6/secrets";
export default async function () {
	const v = await secrets.get("token");
	const w = await secrets.source("main").get("token");
	let why;
	try { await secrets.get("nope"); } catch (e) { why = [String(e), typeof e, String(e.name)].join("/"); }
	console.log("got", v, v === w, v.length, why, "never-read", { v });
	throw new Error("bad " + v);
}`,
	}, &jstest.Config{Secrets: store})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	want := `got ***SECRET_REDACTED*** true 7 no value/object/undefined never-read { v: "***SECRET_REDACTED***" }`
	if !strings.Contains(out, want) || !strings.Contains(out, "Error: bad ***SECRET_REDACTED***") || strings.Contains(out, "tok-123") {
		t.Fatalf("got %s\nwant the line %s and the error masked", out, want)
	}
}

// Without --secret-source every get rejects with k6's sentence.
func TestNoSources(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import secrets from "k6/secrets";
export default async function () {
	try { await secrets.get("x"); } catch (e) { console.log("why", e); }
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if !strings.Contains(r.Stderr.String(), "why no secret sources are configured") {
		t.Fatalf("got %s", r.Stderr)
	}
}
