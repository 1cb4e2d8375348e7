package audit

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/internal/testkit/memstat"
	"github.com/metronome-load/metronome/metrics"
)

const closedOptions = `{"scenarios":{"closed":{"executor":"constant-vus","vus":50,"duration":"1h"}}}`

// liveDuringCharge audits in and returns how much the live heap grew from
// before the audit to the middle of the requests' charge, when everything
// the audit keeps of the whole output is held (iterations, aggregates, the
// spool): after a collection, so garbage does not count.
func liveDuringCharge(t *testing.T, in []byte, options string, mid int) int64 {
	t.Helper()
	o := Options{Scenarios: scenarios(t, options)}
	before := memstat.LiveHeap()
	var during uint64
	n := 0
	o.rebuilt = func(s metrics.Sample) {
		if n++; n == mid {
			during = memstat.LiveHeap()
		}
	}
	res, err := Audit(bytes.NewReader(in), "out.json.gz", o)
	if err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatalf("only %d samples rebuilt, want more than %d", n, mid)
	}
	_ = res
	return int64(during) - int64(before)
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// A gzip of many identical request lines (hostile probe 4, #4: 3,000,000
// of them in 1.86 MB took 591 MB) costs the audit no memory per line: the
// requests wait in the spool, here moved to its file early. 200,000 lines,
// which kept 48 bytes each in memory before (some 20 MB with the slice's
// growth), must take under 4 MB of live heap, the aggregates' few dense
// histograms included.
func TestIdenticalLinesDoNotAccumulate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads 200,000 lines (not with -short or -race)")
	}
	defer func(m int) { spoolMemory = m }(spoolMemory)
	spoolMemory = 64 << 10
	var b bytes.Buffer
	b.WriteString(`{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"http_req_duration"}` + "\n")
	line := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-12-02T04:00:00.000000Z","value":1.5,"tags":{"name":"st","scenario":"closed","status":"200"}}}` + "\n"
	const n = 200_000
	b.WriteString(strings.Repeat(line, n))
	in := gzipped(t, b.Bytes())
	grew := liveDuringCharge(t, in, closedOptions, n/2)
	t.Logf("%d identical lines (%d bytes gzipped): live heap +%d bytes", n, len(in), grew)
	if grew > 4<<20 {
		t.Errorf("%d identical lines took %d bytes of live heap, want under 4 MB", n, grew)
	}
}

// distinctURLs is k6's output of a closed loop of 50 VUs whose every
// request has a URL (and name) of its own: n iterations of one request.
func distinctURLs(n int) []byte {
	o := newK6Output(true)
	for k := range n {
		vu := k%50 + 1
		start := float64(k/50) * 60
		end := start + 2
		name := fmt.Sprintf("http://127.0.0.1:8080/item/%d", k)
		o.request(at(t0, end), ms(2), "closed", name, vu, k/50)
		o.iteration(at(t0, start), at(t0, end+50), "closed", vu, k/50)
	}
	return o.b.Bytes()
}

// An audit of an output with a URL per request keeps a bounded cost per
// URL (the done-when of issue 38: 100,000 distinct URLs under 200 MB of
// RSS for the whole process; docs/stock-k6.md has the figure): its rows
// keep the first 50 names apart and fold the rest, its spool holds no tag
// set for good, and the tag sets are interned only while something holds
// them. 10,000 URLs, which cost about 250 KB each with a dense sink per
// name row and 3 KB each with every tag set kept, must take under 2 KB
// each of live heap.
func TestDistinctURLsCostLittle(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads 100,000 lines (not with -short or -race)")
	}
	const n = 10_000
	in := gzipped(t, distinctURLs(n))
	grew := liveDuringCharge(t, in, closedOptions, n/2)
	t.Logf("%d URLs: live heap +%d bytes, %d a URL", n, grew, grew/n)
	if grew > n*2048 {
		t.Errorf("%d distinct URLs took %d bytes of live heap (%d a URL), want under 2 KB a URL", n, grew, grew/n)
	}
}

// Past the first 50 request names the rows fold the names together, as
// the summary and the log do, and the text says how many names that is;
// the folded rows hold every sample of those names.
func TestRowsFoldNamesPastTheCap(t *testing.T) {
	const n = 60
	res := auditWith(t, distinctURLs(n), Options{Scenarios: scenarios(t, closedOptions)})
	named, folded := 0, 0
	for _, r := range res.Rows {
		switch {
		case r.Labels == foldedLabels:
			folded++
			if r.Count != n-metrics.MaxBreakdownValues {
				t.Errorf("%s folded row holds %d values, want %d", r.Source, r.Count, n-metrics.MaxBreakdownValues)
			}
		case strings.HasPrefix(r.Labels, "name="):
			named++
		}
	}
	if named != 2*metrics.MaxBreakdownValues || folded != 2 {
		t.Errorf("%d named rows and %d folded, want %d and 2 (k6's and the audit's)", named, folded, 2*metrics.MaxBreakdownValues)
	}
	if want := "10 request names past the first 50"; res.Folded != want {
		t.Errorf("Folded = %q, want %q", res.Folded, want)
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(names past the cap, folded)", "10 request names past the first 50 have no rows of their own"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text does not say %q", want)
		}
	}
}

// A spool that moves to its temporary file reads back what one in memory
// does: the same rebuilt samples, rows and log.
func TestSpoolOnDiskGivesTheSameAudit(t *testing.T) {
	for name, in := range map[string]struct {
		out     *k6Output
		options string
	}{
		"open":   {frozenOpen(false, map[int]float64{200: 2}), openOptions},
		"closed": {frozenClosed(true), `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"auto"}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			inMemory := audit(t, in.out, in.options)
			defer func(m int) { spoolMemory = m }(spoolMemory)
			spoolMemory = 256
			onDisk := audit(t, in.out, in.options)
			if g, w := values(onDisk, metrics.CorrectedLatencyName, nil), values(inMemory, metrics.CorrectedLatencyName, nil); len(g) == 0 || !sameValues(g, w) {
				t.Errorf("%d corrected_latency values from disk, %d from memory, or they differ", len(g), len(w))
			}
			var a, b bytes.Buffer
			if err := onDisk.WriteLog(&a); err != nil {
				t.Fatal(err)
			}
			if err := inMemory.WriteLog(&b); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("the logs differ")
			}
			if fmt.Sprint(onDisk.Rows) != fmt.Sprint(inMemory.Rows) {
				t.Errorf("the rows differ:\n%v\n%v", onDisk.Rows, inMemory.Rows)
			}
		})
	}
}
