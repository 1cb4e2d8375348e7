package audit

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/metrics"
)

// Output that is not k6's JSON output is refused in one sentence that
// names the file and the line.
func TestNotK6Output(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"JSON array":       {`[{"metric":"http_reqs"}]`, "line 1 is not a JSON object"},
		"summary export":   {"{\n  \"metrics\": {\"http_reqs\": {\"count\": 3}}\n}\n", "line 1 is not a JSON object"},
		"HdrHistogram log": {"#[StartTime: 1700000000.000 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\"\n", "line 1 is not"},
		"CSV output":       {"metric_name,timestamp,metric_value\nhttp_reqs,1700000000,1\n", "line 1 is not"},
		"other records":    {`{"type":"Log","data":{"msg":"hello"}}` + "\n", `line 1 has type "Log"`},
		"blank lines":      {"\n\n  \nnot json\n", "line 4 is not"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Audit(strings.NewReader(c.in), "other.json", Options{Scenarios: scenarios(t, openOptions)})
			if !errors.Is(err, errNotK6) || !strings.Contains(err.Error(), "other.json") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want errNotK6 naming the file and %q", err, c.want)
			}
		})
	}
	_, err := Audit(strings.NewReader(""), "empty.json", Options{Scenarios: scenarios(t, openOptions)})
	if err == nil || !strings.Contains(err.Error(), "empty.json holds no samples") {
		t.Errorf("empty file: %v", err)
	}
}

// An output that already holds corrected_latency was measured: a
// metronome run, or k6 with jslib/intended.js. There is nothing to audit.
func TestMeasuredOutput(t *testing.T) {
	in := `{"type":"Metric","data":{"name":"corrected_latency","type":"trend","contains":"time"},"metric":"corrected_latency"}` + "\n"
	_, err := Audit(strings.NewReader(in), "metronome.json", Options{Scenarios: scenarios(t, openOptions)})
	if err == nil || !strings.Contains(err.Error(), "already holds corrected_latency") || !strings.Contains(err.Error(), "intended.js") {
		t.Errorf("err = %v", err)
	}
}

// An output cut short, plain or gzipped, is audited as far as it goes, and
// the audit says where it ends; the arrivals after it are counted as
// missing, not charged.
func TestCutShort(t *testing.T) {
	full := frozenOpen(true, nil).b.Bytes()
	half := full[:len(full)/2]
	if half[len(half)-1] == '\n' {
		half = half[:len(half)-1]
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(full); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		in   []byte
		gzip bool
		cut  string
	}{
		"plain":   {half, false, "the file ends inside line"},
		"gzipped": {z.Bytes()[:z.Len()/2], true, "the compressed data breaks off"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Audit(bytes.NewReader(c.in), "cut.json", Options{Scenarios: scenarios(t, openOptions)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reading.Gzip != c.gzip || !strings.Contains(res.Reading.Cut, c.cut) {
				t.Errorf("gzip %v, cut %q; want %v and %q", res.Reading.Gzip, res.Reading.Cut, c.gzip, c.cut)
			}
			sc := res.Scenarios[0]
			if sc.Missing == 0 || sc.Missing+sc.OnTime+sc.Late+sc.Dropped != 450 {
				t.Errorf("account %+v: want some arrivals missing, and every arrival counted once", sc)
			}
			var text bytes.Buffer
			if err := res.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{c.cut, "the audit covers what came before", "left no start or drop in the output"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the text does not say %q:\n%s", want, text.String())
				}
			}
		})
	}
}

// Lines that are not k6 samples, samples of undeclared metrics and of
// metrics declared against their built-in type are skipped, counted and
// described; the rest is audited.
func TestSkippedLines(t *testing.T) {
	out := frozenOpen(true, nil)
	lines := strings.SplitAfter(out.b.String(), "\n")
	extra := []string{
		"this is not JSON\n",
		`{"type":"Log","data":{}}` + "\n",
		`{"metric":"my_trend","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":3,"tags":{}}}` + "\n",
		`{"type":"Metric","data":{"name":"vus","type":"trend","contains":"time"},"metric":"vus"}` + "\n",
		`{"metric":"vus","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":3,"tags":{}}}` + "\n",
		`{"metric":"http_reqs","type":"Point","data":{"time":"yesterday","value":1,"tags":{}}}` + "\n",
	}
	in := strings.Join(lines[:40], "") + strings.Join(extra, "") + strings.Join(lines[40:], "")
	res, err := Audit(strings.NewReader(in), "mixed.json", Options{Scenarios: scenarios(t, openOptions)})
	if err != nil {
		t.Fatal(err)
	}
	rd := res.Reading
	if rd.Malformed != 2 || rd.Unknown != 1 || rd.Undeclared["my_trend"] != 1 || rd.Conflicting["vus"] == "" || len(rd.Examples) != 3 {
		t.Errorf("reading %+v: want 2 malformed, 1 unknown, my_trend undeclared, vus conflicting, 3 examples", rd)
	}
	if !strings.HasPrefix(rd.Examples[0], "line 41: not a JSON record") {
		t.Errorf("first example %q, want it to name line 41", rd.Examples[0])
	}
	skipped := strings.Join(res.Skipped(), "\n")
	for _, want := range []string{"3 lines that are not k6 samples", "my_trend, a metric the output never declared", "the samples of vus: the output declared a trend, but vus is a gauge", "a Point whose time \"yesterday\""} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped does not say %q:\n%s", want, skipped)
		}
	}
	if sc := res.Scenarios[0]; sc.Dropped != 40 || sc.OnTime != 410 {
		t.Errorf("account %+v: the rest should be audited as a whole output is", sc)
	}
}

// A run without the scenario system tag is audited when it has one
// scenario; with several its samples cannot be told apart.
func TestWithoutScenarioTags(t *testing.T) {
	in := strings.ReplaceAll(frozenOpen(true, nil).b.String(), `"scenario":"open"`, `"group":""`)
	res := auditWith(t, []byte(in), Options{Scenarios: scenarios(t, openOptions)})
	if sc := res.Scenarios[0]; sc.Dropped != 40 || len(values(res, metrics.CorrectedLatencyName, nil)) != 450 || len(sc.Notes) == 0 {
		t.Errorf("account %+v: want the whole output audited as the only scenario, and a note saying so", sc)
	}
	_, err := Audit(strings.NewReader(in), "untagged.json", Options{Scenarios: scenarios(t,
		`{"scenarios":{"a":{"executor":"constant-vus","vus":1,"duration":"1s"},"b":{"executor":"constant-vus","vus":1,"duration":"1s"}}}`)})
	if err == nil || !strings.Contains(err.Error(), "no scenario tags") {
		t.Errorf("err = %v, want the missing scenario tag named", err)
	}
}

// Values k6 cannot have written (hostile probe 4, #12) are skipped as
// damaged lines, by line number, and the rest is audited as if they were
// not there: a duration the audit adds (a request's own time, an
// iteration's duration) longer than any run, which would wrap the
// arithmetic into negative times, and a dropped_iterations count that is
// not a whole number of drops, which would make an event per arrival.
func TestImpossibleValuesAreSkipped(t *testing.T) {
	const options = `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"auto"}}}`
	clean := frozenClosed(true).b.String()
	lines := strings.SplitAfter(clean, "\n")
	tags := `"tags":{"method":"GET","name":"x","scenario":"closed","status":"200"},"metadata":{"iter":"3","vu":"1"}`
	extra := []string{
		`{"metric":"http_req_duration","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":1e300,` + tags + "}}\n",
		`{"metric":"iteration_duration","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":1e18,"tags":{"scenario":"closed"}}}` + "\n",
		`{"metric":"http_req_blocked","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":-1e14,` + tags + "}}\n",
		`{"type":"Metric","data":{"name":"dropped_iterations","type":"counter","contains":"default"},"metric":"dropped_iterations"}` + "\n",
		`{"metric":"dropped_iterations","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":1e12,"tags":{"scenario":"closed"}}}` + "\n",
		`{"metric":"dropped_iterations","type":"Point","data":{"time":"2026-12-01T10:00:01Z","value":0.5,"tags":{"scenario":"closed"}}}` + "\n",
	}
	damaged := strings.Join(lines[:30], "") + strings.Join(extra, "") + strings.Join(lines[30:], "")
	want := auditWith(t, []byte(clean), Options{Scenarios: scenarios(t, options)})
	got := auditWith(t, []byte(damaged), Options{Scenarios: scenarios(t, options)})
	rd := got.Reading
	if rd.Malformed != 5 || len(rd.Examples) != 5 || !strings.HasPrefix(rd.Examples[0], "line 31: a Point of http_req_duration whose value 1e+300 ms is longer than any run") ||
		!strings.HasPrefix(rd.Examples[1], "line 32: a Point of iteration_duration whose value 1e+18 ms") ||
		!strings.HasPrefix(rd.Examples[3], "line 35: a Point of dropped_iterations whose value 1e+12 is no count") {
		t.Errorf("reading %+v: want the 5 damaged lines skipped, each named by its line", rd)
	}
	if g, w := got.Scenarios[0], want.Scenarios[0]; g.Requests != w.Requests || g.BackFill.Backfilled != w.BackFill.Backfilled || g.K6Dropped != 0 {
		t.Errorf("account %+v, want %+v: the damaged lines left out", g, w)
	}
	if g, w := values(got, metrics.CorrectedLatencyName, nil), values(want, metrics.CorrectedLatencyName, nil); !sameValues(g, w) {
		t.Errorf("corrected_latency differs from the audit without the damaged lines")
	}
	var text bytes.Buffer
	if err := got.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); strings.Contains(s, "=-") || strings.Contains(s, "--") || !strings.Contains(s, "longer than any run") {
		t.Errorf("the text shows a wrapped duration or does not say what it skipped:\n%s", s)
	}
}

// A damaged own time under the duration bound (here 10^12 ms, 31 years)
// would back-fill some 10^11 samples at the loop's 12.5 ms: the audit
// stops back-filling at maxBackFill samples, so it ends, and says how many
// requests record their own time alone.
func TestBackFillIsBounded(t *testing.T) {
	defer func(m int64) { maxBackFill = m }(maxBackFill)
	maxBackFill = 100
	out := frozenClosed(true)
	out.request(at(t0, 5000), ms(1e12), "closed", target, 1, 399)
	res := auditWith(t, out.b.Bytes(), Options{Scenarios: scenarios(t, `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}}}`)})
	sc := res.Scenarios[0]
	if sc.BackFill.Backfilled != 39 || sc.BackFill.Requests != 411 || len(values(res, metrics.CorrectedLatencyName, nil)) != 450 {
		t.Errorf("back-fill %+v: want the loop's 39 samples and none for the damaged request", sc.BackFill)
	}
	if len(sc.Notes) != 1 || !strings.HasPrefix(sc.Notes[0], "1 requests record their own time alone: the audit stopped back-filling at 100 samples") {
		t.Errorf("notes %q, want the one request left without back-fill", sc.Notes)
	}
}
