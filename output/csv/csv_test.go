package csv

import (
	"bytes"
	"compress/gzip"
	stdcsv "encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// The default system tags, in k6's (unsorted) definition order, plus the
// two non-indexable ones.
var systemTags = []string{
	"proto", "subproto", "status", "method", "url", "name", "group", "check", "error",
	"error_code", "tls_version", "scenario", "service", "expected_response", "vu", "iter",
}

func newOutput(t *testing.T, p output.Params) *Output {
	t.Helper()
	o, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return o.(*Output)
}

func run(t *testing.T, p output.Params, samples []metrics.Sample) {
	t.Helper()
	o := newOutput(t, p)
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	o.AddSamples(samples[:1])
	o.AddSamples(samples[1:])
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
}

func readCSV(t *testing.T, r io.Reader) [][]string {
	t.Helper()
	rows, err := stdcsv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v", err)
	}
	return rows
}

var base = time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.UTC)

func samples() []metrics.Sample {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	return []metrics.Sample{
		{Metric: b.HTTPReqDuration, Time: base, Value: 12.3456789, Tags: metrics.NewTags(map[string]string{
			"method": "GET", "status": "200", "url": "http://x/a,b", "name": `say "hi"`, "zone": "eu", "build": "1.2"}),
			Metadata: map[string]string{"vu": "3", "iter": "9"}},
		{Metric: b.Iterations, Time: base.Add(1500 * time.Millisecond), Value: 1, Tags: metrics.NewTags(map[string]string{
			"scenario": "api", "group": "::login"})},
		{Metric: b.VUs, Time: base.Add(2 * time.Second), Value: -0.5, Tags: nil},
	}
}

func TestHeaderAndRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	run(t, output.Params{Arg: path, SystemTags: systemTags}, samples())
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := readCSV(t, f)

	wantHeader := "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name," +
		"proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata"
	if got := strings.Join(rows[0], ","); got != wantHeader {
		t.Fatalf("header\n got %s\nwant %s", got, wantHeader)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want header + 3", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	r := rows[1]
	for k, want := range map[string]string{
		"metric_name": "http_req_duration", "timestamp": strconv.FormatInt(base.Unix(), 10),
		"metric_value": "12.345679", "method": "GET", "status": "200", "url": "http://x/a,b",
		"name": `say "hi"`, "scenario": "", "extra_tags": "build=1.2&zone=eu", "metadata": "iter=9&vu=3",
	} {
		if r[col[k]] != want {
			t.Errorf("row 1 %s = %q, want %q", k, r[col[k]], want)
		}
	}
	r = rows[2]
	if r[col["scenario"]] != "api" || r[col["group"]] != "::login" || r[col["extra_tags"]] != "" ||
		r[col["metric_value"]] != "1.000000" || r[col["timestamp"]] != strconv.FormatInt(base.Add(1500*time.Millisecond).Unix(), 10) {
		t.Errorf("row 2 = %q", r)
	}
	if r := rows[3]; r[col["metric_value"]] != "-0.500000" || r[col["metric_name"]] != "vus" {
		t.Errorf("row 3 = %q", r)
	}
}

func TestTimeFormats(t *testing.T) {
	for format, want := range map[string]string{
		"":             strconv.FormatInt(base.Unix(), 10),
		"unix":         strconv.FormatInt(base.Unix(), 10),
		"unix_milli":   strconv.FormatInt(base.UnixNano()/1e6, 10),
		"unix_micro":   strconv.FormatInt(base.UnixNano()/1e3, 10),
		"unix_nano":    strconv.FormatInt(base.UnixNano(), 10),
		"rfc3339":      "2026-03-04T05:06:07Z",
		"rfc3339_nano": "2026-03-04T05:06:07.891234567Z",
	} {
		var buf bytes.Buffer
		run(t, output.Params{Arg: "-", Stdout: &buf, Env: map[string]string{"K6_CSV_TIME_FORMAT": format}}, samples())
		if got := readCSV(t, &buf)[1][1]; got != want {
			t.Errorf("format %q: timestamp %q, want %q", format, got, want)
		}
	}
	// The -o argument overrides the environment.
	var buf bytes.Buffer
	run(t, output.Params{Arg: "fileName=-,timeFormat=unix_milli", Stdout: &buf,
		Env: map[string]string{"K6_CSV_TIME_FORMAT": "rfc3339"}}, samples())
	if got := readCSV(t, &buf)[1][1]; got != strconv.FormatInt(base.UnixMilli(), 10) {
		t.Errorf("argument timeFormat ignored: %q", got)
	}
}

func TestNoSystemTags(t *testing.T) {
	var buf bytes.Buffer
	run(t, output.Params{Arg: "-", Stdout: &buf}, samples())
	rows := readCSV(t, &buf)
	if got := strings.Join(rows[0], ","); got != "metric_name,timestamp,metric_value,extra_tags,metadata" {
		t.Errorf("header %s", got)
	}
	// Every tag is extra then, sorted by key.
	if got := rows[1][3]; got != `build=1.2&method=GET&name=say "hi"&status=200&url=http://x/a,b&zone=eu` {
		t.Errorf("extra_tags %q", got)
	}
}

func TestGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv.gz")
	run(t, output.Params{Arg: path, SystemTags: systemTags}, samples())
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	rows := readCSV(t, zr)
	if len(rows) != 4 || rows[1][0] != "http_req_duration" || rows[3][0] != "vus" {
		t.Errorf("rows %q", rows)
	}
}

func TestDefaultFileName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	run(t, output.Params{}, samples())
	if _, err := os.Stat(filepath.Join(dir, "file.csv")); err != nil {
		t.Errorf("default file: %v", err)
	}
	run(t, output.Params{Env: map[string]string{"K6_CSV_FILENAME": "env.csv"}}, samples())
	if _, err := os.Stat(filepath.Join(dir, "env.csv")); err != nil {
		t.Errorf("K6_CSV_FILENAME: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, p := range []output.Params{
		{Env: map[string]string{"K6_CSV_TIME_FORMAT": "iso"}},
		{Env: map[string]string{"K6_CSV_SAVE_INTERVAL": "soon"}},
		{Env: map[string]string{"K6_CSV_SAVE_INTERVAL": "0s"}},
		{Arg: "fileName=x.csv,compress=yes"},
		{Arg: "saveInterval=-1s"},
	} {
		_, err := New(p)
		if err == nil {
			t.Errorf("%+v accepted", p)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "csv output: ") || strings.Contains(msg, "\n") {
			t.Errorf("error %q", msg)
		}
	}
	o := newOutput(t, output.Params{Arg: filepath.Join(t.TempDir(), "no", "such", "dir.csv")})
	if err := o.Start(); err == nil || !strings.Contains(err.Error(), "dir.csv") {
		t.Errorf("Start = %v", err)
	}
	if c, ok := output.Lookup("csv"); !ok || c == nil {
		t.Error("csv output not registered")
	}
}

// Rows reach the file every save interval, not before.
func TestSaveInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out.csv")
		o := newOutput(t, output.Params{Arg: path, Env: map[string]string{"K6_CSV_SAVE_INTERVAL": "3s"}})
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples(samples())
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		if data, _ := os.ReadFile(path); len(data) != 0 {
			t.Errorf("written before the interval: %q", data)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		data, _ := os.ReadFile(path)
		if rows := readCSV(t, bytes.NewReader(data)); len(rows) != 4 {
			t.Errorf("%d rows after the interval, want 4", len(rows))
		}
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
	})
}

func benchSamples(n int) []metrics.Sample {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	ms := []*metrics.Metric{b.HTTPReqDuration, b.HTTPReqWaiting, b.HTTPReqs, b.HTTPReqFailed}
	var sets []*metrics.TagSet
	for i := 0; i < 8; i++ {
		u := "http://127.0.0.1:8080/item/" + strconv.Itoa(i)
		sets = append(sets, metrics.NewTags(map[string]string{
			"expected_response": "true", "group": "", "method": "GET", "name": u, "proto": "HTTP/1.1",
			"scenario": "default", "status": "200", "url": u, "testid": "run-1",
		}))
	}
	now := time.Now()
	out := make([]metrics.Sample, n)
	for i := range out {
		out[i] = metrics.Sample{Metric: ms[i%len(ms)], Tags: sets[i%len(sets)],
			Time: now.Add(time.Duration(i) * time.Microsecond), Value: float64(i%1000) * 0.137}
	}
	return out
}

// BenchmarkAddSamplesEncode measures the whole path: AddSamples, CSV
// encoding and writing (to io.Discard), per sample.
func BenchmarkAddSamplesEncode(b *testing.B) {
	const batch = 1000
	s := benchSamples(batch)
	o, _ := New(output.Params{Arg: "-", Stdout: io.Discard, SystemTags: systemTags})
	if err := o.Start(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		o.AddSamples(s[:min(batch, b.N-n)])
	}
	if err := o.Stop(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
