package secrets

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func fetched(t *testing.T, text string, names ...string) *Store {
	t.Helper()
	s, err := Parse([]string{"file=" + writeFile(t, "s.txt", text)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := s.Get(DefaultName, n); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// A secret split between writes, or at the very end of what was written,
// is still masked; complete lines go out at once.
func TestWriterSplitSecret(t *testing.T) {
	s := fetched(t, "k=s3cr3t-value\n", "k")
	var out bytes.Buffer
	w := s.Writer(&out)
	for _, p := range []string{"one s3cr", "3t-val", "ue two\nthree s3c"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := out.String(); got != "one "+Mask+" two\n" {
		t.Errorf("after the writes: %q, want the complete line only", got)
	}
	_, _ = w.Write([]byte("r3t-value"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "one "+Mask+" two\nthree "+Mask; got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}

// Before any secret is fetched nothing is held back or changed; wrapping
// a Writer of the same Store again gives the same Writer, so the mask is
// not masked again.
func TestWriterPassThroughAndIdempotent(t *testing.T) {
	s := fetched(t, "k=RED\n")
	var out bytes.Buffer
	w := s.Writer(&out)
	_, _ = w.Write([]byte("RED partial"))
	if out.String() != "RED partial" {
		t.Errorf("nothing fetched: %q", out.String())
	}
	if _, err := s.Get(DefaultName, "k"); err != nil {
		t.Fatal(err)
	}
	if s.Writer(w) != w {
		t.Fatal("wrapping a Writer of the same Store made a second one")
	}
	out.Reset()
	_, _ = s.Writer(w).Write([]byte("a RED line\n"))
	if got := out.String(); got != "a "+Mask+" line\n" {
		t.Errorf("got %q", got)
	}
	var nilStore *Store
	out.Reset()
	_, _ = nilStore.Writer(&out).Write([]byte("RED"))
	if out.String() != "RED" || string(nilStore.RedactBytes([]byte("RED"))) != "RED" {
		t.Error("a nil Store must hide nothing")
	}
}

// A secret is masked also as JSON, HTML and URLs spell it.
func TestRedactSpellings(t *testing.T) {
	s := fetched(t, "k=a\"b<c>&d e/f+g\n", "k")
	for _, form := range []string{`a"b<c>&d e/f+g`, `a\"b\u003cc\u003e\u0026d e/f+g`, `a\"b<c>&d e/f+g`,
		`a&#34;b&lt;c&gt;&amp;d e/f+g`, `a&#34;b&lt;c&gt;&amp;d e/f&#43;g`,
		`a%22b%3Cc%3E%26d+e%2Ff%2Bg`, `a%22b%3Cc%3E&d%20e%2Ff+g`} {
		if got := s.Redact("[" + form + "]"); got != "["+Mask+"]" {
			t.Errorf("%s: %q", form, got)
		}
	}
}

// Concurrent writers (the log sink and an output on one stdout) never
// tear a line.
func TestWriterConcurrent(t *testing.T) {
	s := fetched(t, "k=s3cr3t\n", "k")
	var out bytes.Buffer
	w := s.Writer(&out)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = w.Write([]byte("line s3cr3t\n"))
			}
		})
	}
	wg.Wait()
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l != "line "+Mask {
			t.Fatalf("torn or unmasked line %q", l)
		}
	}
}
