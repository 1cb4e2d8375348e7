package result

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Tail polled while the file grows in pieces cut anywhere learns, in
// the end, what Read learns of the whole file, and its Open reads the
// same numbers; while a line is still being written the file reads as
// cut short. Each Poll reads only what was appended: bytes already read
// may change under it unnoticed.
func TestTailReadsWhatWasAppended(t *testing.T) {
	r := record(t, nil, 25, httpSamples, nil)
	whole, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	want := describe(engineOf(t, r.reg, nil, readFile(t, r.path)))
	rng := rand.New(rand.NewPCG(3, 3))
	cuts := slices.Sorted(slices.Values(rng.Perm(len(whole))[:30]))
	path := filepath.Join(t.TempDir(), "growing.result")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tail := NewTail(path)
	written := 0
	for _, cut := range append(cuts, len(whole)) {
		if cut == 0 {
			continue
		}
		if _, err := fh.Write(whole[written:cut]); err != nil {
			t.Fatal(err)
		}
		// Scribble over what was read: a tail that read the file again
		// would refuse it.
		if written > 0 {
			if _, err := fh.WriteAt(bytes.Repeat([]byte{'#'}, written), 0); err != nil {
				t.Fatal(err)
			}
		}
		written = cut
		if restarted, err := tail.Poll(); err != nil || restarted {
			t.Fatalf("poll at %d of %d bytes: restarted %v, %v", cut, len(whole), restarted, err)
		}
		f, err := tail.File()
		if cut < bytes.IndexByte(whole, '\n')+1 {
			if err == nil {
				t.Errorf("at %d bytes, before the header's line break, the file reads without error", cut)
			}
			continue
		}
		if err != nil {
			t.Fatalf("at %d bytes: %v", cut, err)
		}
		complete := cut == len(whole)
		if (f.End != nil) != complete || (f.Truncated == "") != complete {
			t.Errorf("at %d of %d bytes: end %v, truncated %q", cut, len(whole), f.End, f.Truncated)
		}
		if !complete && whole[cut-1] != '\n' && !strings.Contains(f.Truncated, "is cut short") {
			t.Errorf("at %d bytes, mid-line: truncated %q, want cut short", cut, f.Truncated)
		}
	}
	f, err := tail.Finish()
	if err != nil {
		t.Fatal(err)
	}
	full := readFile(t, r.path)
	if f.Intervals != full.Intervals || f.End == nil || len(f.Metrics) != len(full.Metrics) || f.Series != nil {
		t.Errorf("tailed: %d intervals, %d metrics, end %v, %d totals; read whole: %d intervals, %d metrics",
			f.Intervals, len(f.Metrics), f.End, len(f.Series), full.Intervals, len(full.Metrics))
	}
	// The runner's bytes again where the polls scribbled: Open reads the
	// file for its numbers, as far as the tail saw it.
	if _, err := fh.WriteAt(whole, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write([]byte(`{"more":"after the tail's look"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	rc, err := tail.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	numbers, err := Read(rc, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(engineOf(t, r.reg, nil, numbers)); got != want {
		t.Errorf("tailed:\n%s\nread whole:\n%s", got, want)
	}
}

// A file begun anew (shorter than what was read, or another file at the
// path) is read from its start, and Poll says so.
func TestTailRestarts(t *testing.T) {
	r := record(t, nil, 10, httpSamples, nil)
	whole, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.result")
	tail := NewTail(path)
	if _, err := tail.Poll(); err == nil {
		t.Fatal("a file that is not there yet polls without error")
	}
	for i, content := range [][]byte{whole, whole[:len(whole)/2], whole} {
		if i == 2 {
			// Another file, as long as the first: renamed over the path.
			other := path + ".new"
			if err := os.WriteFile(other, content, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		restarted, err := tail.Poll()
		if err != nil || restarted != (i > 0) {
			t.Fatalf("poll %d: restarted %v, %v", i, restarted, err)
		}
		if restarted {
			// Read nothing yet: the next Poll reads the new file whole.
			if f, err := tail.File(); err == nil {
				t.Fatalf("poll %d: restarted, yet the file reads as %+v", i, f.Scanned)
			}
			if restarted, err := tail.Poll(); err != nil || restarted {
				t.Fatalf("poll %d after the restart: restarted %v, %v", i, restarted, err)
			}
		}
	}
	f, err := tail.Finish()
	if err != nil || f.End == nil {
		t.Fatalf("finished: %v", err)
	}
	rc, err := tail.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	numbers, err := Read(rc, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(engineOf(t, r.reg, nil, numbers)), describe(engineOf(t, r.reg, nil, readFile(t, r.path))); got != want {
		t.Errorf("after restarts:\n%s\nread whole:\n%s", got, want)
	}
	// Another file at the path since the look: Open refuses it.
	if err := os.WriteFile(path+".new", whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if _, err := tail.Open(); err == nil || !strings.Contains(err.Error(), "changed while it was merged") {
		t.Errorf("open of a file replaced since the look: %v", err)
	}
}
