package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/metrics"
)

// lines is a result file as JSON values, numbers kept as written.
type lines []map[string]any

func parseLines(t *testing.T, b []byte) lines {
	t.Helper()
	var out lines
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (ls lines) bytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, l := range ls {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// seriesID is the id of the first series of metric.
func (ls lines) seriesID(metric string) json.Number {
	for _, l := range ls {
		if s, ok := l["series"].(map[string]any); ok && s["metric"] == metric {
			return s["id"].(json.Number)
		}
	}
	return ""
}

// entries calls f with each interval entry of series id, and the line's
// index.
func (ls lines) entries(id json.Number, f func(i int, e map[string]any)) {
	for i, l := range ls {
		iv, ok := l["interval"].(map[string]any)
		if !ok {
			continue
		}
		for _, e := range iv["data"].([]any) {
			if e := e.(map[string]any); e["s"] == id {
				f(i, e)
			}
		}
	}
}

// wideHistogram is an encoded histogram of a geometry the writer never
// writes: 1 to 2^63-1 at 5 digits, as hostile probe 4's #2.
func wideHistogram(t *testing.T) string {
	t.Helper()
	h := hdrhistogram.NewPacked(1, 1<<63-1, 5)
	for v := int64(1); v < 1<<62; v *= 3 {
		_ = h.RecordValue(v)
	}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The numbers of a result file that its writer cannot have written are
// refused, naming the file and the line (hostile probe 4, #2, #5, #10):
// each forgery below merged before with exit 0 and no warning.
func TestReadRefusesForgedNumbers(t *testing.T) {
	r := record(t, nil, 12, httpSamples, nil)
	whole, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(whole), "real.result"); err != nil {
		t.Fatalf("the real file: %v", err)
	}
	for _, c := range []struct {
		name   string
		forge  func(ls lines) lines
		want   string
		inLine bool // the message names a line
	}{
		{"negative count", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqsName), func(_ int, e map[string]any) { e["n"] = json.Number("-1000000") })
			return ls
		}, "n is -1000000: a count is not negative", true},
		{"overflowing counts", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqsName), func(_ int, e map[string]any) { e["n"] = json.Number("9223372036854775807") })
			return ls
		}, "its counts overflow", true},
		{"an infinite counter", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqsName), func(_ int, e map[string]any) { e["sum"] = "+Inf" })
			return ls
		}, "sum +Inf: http_reqs counts finite values", true},
		{"a measured trend NaN and infinite", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqDurationName), func(_ int, e map[string]any) {
				e["sum"], e["min"], e["max"] = "NaN", "-Inf", "+Inf"
			})
			return ls
		}, "http_req_duration's values are finite", true},
		{"a custom trend's NaN sum between finite extremes", func(ls lines) lines {
			ls.entries(ls.seriesID("signed"), func(_ int, e map[string]any) { e["sum"] = "NaN" })
			return ls
		}, "sum NaN is not the sum of values between", true},
		{"a trend's n that is not its histogram's", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqDurationName), func(_ int, e map[string]any) { e["n"] = json.Number("1") })
			return ls
		}, "n is 1 but its histograms hold", true},
		{"a gauge outside its extremes", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.VUsName), func(_ int, e map[string]any) { e["value"] = json.Number("1000") })
			return ls
		}, "value 1000 is not between min", true},
		{"a rate of more than all", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqFailedName), func(_ int, e map[string]any) { e["nz"] = json.Number("1000") })
			return ls
		}, "nz 1000 is not between 0 and n", true},
		{"a histogram of another geometry", func(ls lines) lines {
			ls.entries(ls.seriesID(metrics.HTTPReqDurationName), func(_ int, e map[string]any) { e["h"] = wideHistogram(t) })
			return ls
		}, "it declares the range 1 to 9223372036854775807 at 5 significant digits, where metronome writes 1 to 1000000000000 at 3", true},
		{"a series redefined to another metric", func(ls lines) lines {
			id := ls.seriesID(metrics.HTTPReqDurationName)
			redef := map[string]any{"series": map[string]any{"id": id, "metric": metrics.HTTPReqsName}}
			return append(ls[:len(ls)-1:len(ls)-1], redef, ls[len(ls)-1])
		}, "is defined again (first as a series of http_req_duration)", true},
		{"one series twice in an interval", func(ls lines) lines {
			for _, l := range ls {
				if iv, ok := l["interval"].(map[string]any); ok {
					data := iv["data"].([]any)
					data[1] = data[0]
					break
				}
			}
			return ls
		}, "has two entries in one interval", true},
		{"an invalid metric name", func(ls lines) lines {
			for _, l := range ls {
				if m, ok := l["metric"].(map[string]any); ok && m["name"] == "signed" {
					m["name"] = "evil<script>"
				}
				if s, ok := l["series"].(map[string]any); ok && s["metric"] == "signed" {
					s["metric"] = "evil<script>"
				}
			}
			return ls
		}, `"evil<script>" is not a metric name`, true},
		{"a built-in metric of another type", func(ls lines) lines {
			return append(ls[:2:2], append(lines{{"metric": map[string]any{"name": metrics.HTTPReqsName, "type": "trend"}}}, ls[2:]...)...)
		}, "metric http_reqs is metronome's counter, not a trend", true},
		{"a version that does not exist", func(ls lines) lines {
			ls[0]["header"].(map[string]any)["version"] = json.Number("-1")
			return ls
		}, "result format -1 does not exist", true},
		{"another test's identity copied in", func(ls lines) lines {
			ls[0]["header"].(map[string]any)["scriptDigest"] = strings.Repeat("ab", 32)
			return ls
		}, "is not the identity of the script digest and options it records", true},
		{"more series than its cap", func(ls lines) lines {
			ls[0]["header"].(map[string]any)["maxSeries"] = json.Number("3")
			return ls
		}, "is one more than the 3 series its writer records apart", true},
		{"a cap past the limit", func(ls lines) lines {
			ls[0]["header"].(map[string]any)["maxSeries"] = json.Number(fmt.Sprint(MaxSeriesLimit + 1))
			return ls
		}, "is not a series cap metronome writes", true},
	} {
		forged := c.forge(parseLines(t, whole)).bytes(t)
		_, err := Read(bytes.NewReader(forged), "forged.result")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		if c.inLine && !strings.HasPrefix(err.Error(), "forged.result: line ") {
			t.Errorf("%s: %v does not name the file and line", c.name, err)
		}
	}
}

// An interval line of more entries than the file has series (hostile
// probe 4, #5: 6.5 million entries of one series in a 210 MB line took
// 3 GB) is refused from a count of its entries, before they are decoded.
func TestReadRefusesALineOfMoreEntriesThanSeries(t *testing.T) {
	r := record(t, nil, 2, httpSamples, nil)
	whole, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	ls := parseLines(t, whole)
	id := ls.seriesID(metrics.HTTPReqsName)
	var line []byte
	ls.entries(id, func(i int, e map[string]any) {
		if line != nil {
			return
		}
		iv := ls[i]["interval"].(map[string]any)
		data := make([]any, 200_000)
		for k := range data {
			data[k] = e
		}
		iv["data"] = data
		line, _ = json.Marshal(ls[i])
	})
	forged := append(append(bytes.Clone(whole[:bytes.LastIndexByte(whole[:len(whole)-1], '\n')+1]), line...), '\n')
	allocated := func(b []byte) (uint64, error) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Read(bytes.NewReader(b), "forged.result")
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	real, err := allocated(whole)
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := allocated(forged)
	if err == nil || !strings.Contains(err.Error(), "200000 entries, more than the") {
		t.Fatalf("%v", err)
	}
	// Reading the line costs about three times its bytes (the line grows
	// as it is read); its 200,000 entries decoded would cost more.
	t.Logf("the forged line of %d bytes: %d allocated, %d for the real file", len(line), alloc, real)
	if alloc-real > 4*uint64(len(line)) {
		t.Errorf("reading a line of %d bytes allocated %d more than the real file: its entries were decoded", len(line), alloc-real)
	}
}
