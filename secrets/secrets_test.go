package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func writeFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The grammar and the sentences k6 v2.2.0 answers --secret-source with.
func TestParse(t *testing.T) {
	a := writeFile(t, "a.txt", "key=alpha\nkv=x=y\nempty=\n")
	b := writeFile(t, "b.txt", "key=beta\n")
	get := func(s *Store, src, name string) string {
		v, err := s.Get(src, name)
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
	s, err := Parse([]string{"file=" + a})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][3]string{
		{"default", "key", "alpha"}, {"file", "key", "alpha"}, {"default", "kv", "x=y"}, {"default", "empty", ""},
		{"default", "nope", "error: no value"}, {"a", "key", `error: no secret source with name "a" is configured`},
	} {
		if got := get(s, c[0], c[1]); got != c[2] {
			t.Errorf("file=PATH: %s.get(%s) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
	if _, err := s.Get("default", "nope"); !errors.Is(err, ErrNoValue) {
		t.Errorf("a missing secret: %v, want ErrNoValue", err)
	}

	s, err = Parse([]string{"file=name=a,filename=" + a, "file=name=b,filename=" + b + ",default"})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(s, "default", "key") + " " + get(s, "a", "key") + " " + get(s, "b", "key"); got != "beta alpha beta" {
		t.Errorf("named sources: %q", got)
	}
	// Two sources, neither the default: get() has nowhere to read.
	s, _ = Parse([]string{"file=name=a,filename=" + a, "file=name=b,filename=" + b})
	if got := get(s, "default", "key"); got != `error: no secret source with name "default" is configured` {
		t.Errorf("no default: %q", got)
	}
	// One named source is the default.
	s, _ = Parse([]string{"file=name=a,filename=" + a})
	if got := get(s, "default", "key"); got != "alpha" {
		t.Errorf("a lone named source: %q", got)
	}
	var none *Store
	if got := get(none, "default", "key"); got != "error: no secret sources are configured" {
		t.Errorf("no store: %q", got)
	}
	s, _ = Parse(nil)
	if got := get(s, "default", "key"); got != "error: no secret sources are configured" {
		t.Errorf("no sources: %q", got)
	}

	bad := writeFile(t, "bad.txt", "key=v\n\nx=y\n")
	for spec, want := range map[string]string{
		"":                              `couldn't parse secret source configuration ""`,
		"env":                           `no secret source for type "env" for configuration "env"`,
		"vault=x":                       `no secret source for type "vault" for configuration "vault=x"`,
		"file=name=a,filename=x,mode=1": `unknown configuration key for file secret source "mode"`,
		"file=name=a":                   "open : no such file or directory",
		"file=" + bad:                   `parsing "", needs =`,
	} {
		if _, err := Parse([]string{spec}); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", spec, err, want)
		}
	}
	if _, err := Parse([]string{"file=" + a, "file=" + b}); err == nil ||
		err.Error() != `secret source for name "file" already registered before configuration "file=`+b+`"` {
		t.Errorf("two sources named file: %v", err)
	}
}

// Only fetched values are masked, the longer of two overlapping secrets
// whole, and concurrent fetches and redactions are safe.
func TestRedact(t *testing.T) {
	s, err := Parse([]string{"file=" + writeFile(t, "s.txt", "short=abc\nlong=abcdef\nother=zzz\nempty=\n")})
	if err != nil {
		t.Fatal(err)
	}
	msg := "abcdef abc zzz"
	if got := s.Redact(msg); got != msg {
		t.Errorf("nothing fetched yet: %q", got)
	}
	var wg sync.WaitGroup
	for _, name := range []string{"short", "long", "empty"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Get("default", name); err != nil {
				t.Error(err)
			}
			_ = s.Redact(msg)
		}()
	}
	wg.Wait()
	if got, want := s.Redact(msg), Mask+" "+Mask+" zzz"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if got := s.Redact(""); got != "" || strings.Contains(s.Redact("x"), Mask) {
		t.Errorf("an empty secret must mask nothing: %q", s.Redact("x"))
	}
	var none *Store
	if none.Redact(msg) != msg {
		t.Error("a nil Store must redact nothing")
	}
}

// BenchmarkRedact is the cost Redact adds to a console line: nothing
// fetched (every run without secrets), and two secrets fetched.
func BenchmarkRedact(b *testing.B) {
	s, err := Parse([]string{"file=" + writeFile(b, "s.txt", "a=s3cr3t-value\nb=another-one\n")})
	if err != nil {
		b.Fatal(err)
	}
	line := "value is s3cr3t-value and the status was 200 after 12.5 ms"
	b.Run("none-fetched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Redact(line)
		}
	})
	_, _ = s.Get("default", "a")
	_, _ = s.Get("default", "b")
	b.Run("two-fetched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Redact(line)
		}
	})
}
