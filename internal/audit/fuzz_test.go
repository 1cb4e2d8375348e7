package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// FuzzAudit asserts that auditing an untrusted file as k6's JSON output
// never panics and always terminates: what is not k6's output is refused
// in a sentence naming the file, the rest audited as far as it goes. The
// line and tag-set caps keep its memory bounded (memory_test.go). The
// seeds are the heads of the two outputs real k6 v2.2.0 wrote
// (test/e2e/testdata/audit), this package's writer of k6's format, plain
// and gzipped, and a line of each kind of damage the reader skips.
func FuzzAudit(f *testing.F) {
	for _, name := range []string{"k6-open.json.gz", "k6-closed.json.gz"} {
		f.Add(head(f, "../../test/e2e/testdata/audit/"+name, 60))
	}
	small := frozenOpenN(true, nil, 30).b.Bytes()
	f.Add(small)
	f.Add(small[:len(small)/3])
	f.Add(gzipped(f, small))
	f.Add(frozenOpenN(false, map[int]float64{3: 2}, 10).b.Bytes())
	f.Add([]byte(`{"type":"Metric","data":{"name":"x","type":"trend","contains":"time"},"metric":"x"}` + "\n" +
		`{"type":"Point","metric":"x","data":{"time":"2026-12-01T10:00:00Z","value":-1,"tags":{"scenario":"open","vu":"1","iter":"x"}}}` + "\n" +
		`{"type":"Point","metric":"y","data":{"time":"bad","value":1,"tags":null}}` + "\n" +
		`{"type":"Log"}` + "\nnot json\n"))
	opts := Options{Scenarios: scenarios(f, openOptions)}
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Audit(bytes.NewReader(in), "fuzz.json", opts)
		if err != nil {
			if res != nil {
				t.Fatalf("Audit returned a result with its error %v", err)
			}
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if res.Reading.Points > res.Reading.Lines {
			t.Fatalf("%d points from %d lines", res.Reading.Points, res.Reading.Lines)
		}
	})
}

// head is the first n lines of the gzipped file at path.
func head(tb testing.TB, path string, n int) []byte {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReader(zr)
	var out []byte
	for range n {
		line, err := br.ReadBytes('\n')
		out = append(out, line...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}
