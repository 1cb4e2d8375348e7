package dashboard

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// endpointRun is an open model of 10 s at 20 requests/s over two names in
// two scenarios: "login" answers in 5 ms but its arrivals of second 4
// waited 800 ms for a VU; "GET /items" answers in 20 ms on time. names
// more names of one request each follow, for the cap.
func endpointRun(b *metrics.Builtin, names int) []metrics.Sample {
	var out []metrics.Sample
	for i := range 200 {
		at := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		sc := []string{"a", "b"}[i%2]
		name, raw, lag := "GET /items", 20.0, 0.0
		if i%4 < 2 {
			name, raw = "login", 5
			if i/20 == 4 {
				lag = 800
			}
		}
		tags := metrics.NewTags(map[string]string{"scenario": sc, "name": name, "status": "200"})
		out = append(out,
			metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: raw},
			metrics.Sample{Metric: b.HTTPReqWaiting, Tags: tags, Time: at, Value: raw - 1},
			metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: raw + lag},
			metrics.Sample{Metric: b.ScheduleLag, Tags: metrics.NewTags(map[string]string{"scenario": sc}), Time: at, Value: lag})
	}
	for i := range names {
		tags := metrics.NewTags(map[string]string{"scenario": "a", "name": fmt.Sprint("/id/", i)})
		at := t0.Add(9 * time.Second)
		out = append(out,
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: 1})
	}
	return out
}

func endpointByName(t *testing.T, eps []*Endpoint, name string) *Endpoint {
	t.Helper()
	for _, e := range eps {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %q among %d", name, len(eps))
	return nil
}

// The live view and the one read back from the run's HdrHistogram log
// agree: every name's counts and percentiles over the whole run and per
// interval, the stalled name first, the names past the cap counted.
func TestEndpointsLiveAndFromLog(t *testing.T) {
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	samples := endpointRun(b, metrics.MaxBreakdownValues)
	a := NewAggregator(t0, time.Second)
	a.Add(samples)
	a.Close(time.Time{})
	live := a.Snapshot(true)

	fromLog := logTimeline(t, samples)

	for what, tl := range map[string]*Timeline{"live": live, "log": fromLog} {
		// Two names and the first 48 of the others make the cap of 50.
		if len(tl.Endpoints) != metrics.MaxBreakdownValues || tl.EndpointsFolded != 2 {
			t.Errorf("%s: %d endpoints, %d folded samples; want %d and 2", what, len(tl.Endpoints), tl.EndpointsFolded, metrics.MaxBreakdownValues)
		}
		if tl.Endpoints[0].Name != "login" || tl.Endpoints[1].Name != "GET /items" {
			t.Errorf("%s: order %q, %q: want the stalled login first", what, tl.Endpoints[0].Name, tl.Endpoints[1].Name)
		}
		login, items := endpointByName(t, tl.Endpoints, "login"), endpointByName(t, tl.Endpoints, "GET /items")
		if login.Raw.Count != 100 || login.Corrected.Count != 100 || items.Raw.Count != 100 || login.RawMetric != "http_req_duration" {
			t.Errorf("%s: counts %+v %+v", what, login, items)
		}
		// 10 of login's 100 requests waited 800 ms: its corrected p99 is
		// 805 ms, its raw one 5 ms; GET /items' are both 20 ms (to
		// HdrHistogram's 3 digits).
		within(t, what+" login raw p99", login.Raw.P99, 5)
		within(t, what+" login corrected p99", login.Corrected.P99, 805)
		within(t, what+" login corrected p50", login.Corrected.P50, 5)
		within(t, what+" items corrected p99.9", items.Corrected.P999, 20)
		if len(login.Rows) != 10 {
			t.Fatalf("%s: login has %d rows, want 10", what, len(login.Rows))
		}
		for i, r := range login.Rows {
			want := 5.0
			if i == 4 {
				want = 805
			}
			if r.Raw.Count != 10 || r.Corrected.Count != 10 {
				t.Errorf("%s: login row %d: %+v", what, i, r)
			}
			within(t, fmt.Sprintf("%s login row %d corrected p99", what, i), r.Corrected.P99, want)
			within(t, fmt.Sprintf("%s login row %d raw max", what, i), r.Raw.Max, 5)
		}
	}
	for i, e := range live.Endpoints {
		l := endpointByName(t, fromLog.Endpoints, e.Name)
		if e.Raw != l.Raw || e.Corrected != l.Corrected || fmt.Sprint(e.Rows) != fmt.Sprint(l.Rows) {
			t.Errorf("endpoint %d %q: live %+v\nlog %+v", i, e.Name, e, l)
		}
	}
}

// The page shows every name in the table, slowest first, with a chart
// over time for each (the slowest unfolded, the table linking to them);
// with the end-of-test summary the table takes its figures.
func TestEndpointTableOnThePage(t *testing.T) {
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	a := NewAggregator(t0, time.Second)
	a.Add(endpointRun(b, 0))
	tl := a.Snapshot(false)
	p, err := BuildPage(tl, nil, true, "live")
	if err != nil {
		t.Fatal(err)
	}
	v := p.Endpoints
	if v == nil || len(v.Rows) != 2 || len(v.Charts) != 2 {
		t.Fatalf("endpoint view %+v", v)
	}
	if r := v.Rows[0]; r.Name != "login" || r.Requests != "100" || r.Raw[1] != "5ms" || r.Corrected[1] != "805.38ms" || r.Chart != "endpoint-1-latency" {
		t.Errorf("login row %+v", r)
	}
	if !v.Charts[0].Open || v.Charts[1].Open || v.Charts[0].Name != "login" {
		t.Errorf("charts %+v", v.Charts)
	}
	pts := drawnPoints(v.Charts[0].Chart.SVG)
	for _, s := range []string{"raw p99", "corrected p99", "corrected max"} {
		if pts[Palette[s]] != 10 {
			t.Errorf("login chart: %s drew %d points, want one an interval (10)", s, pts[Palette[s]])
		}
	}
	page, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table id="endpoint-table">`, `<details class="endpoint" id="endpoint-1" open><summary>login</summary>`,
		`<figure class="chart" id="endpoint-1-latency"`, `<a href="#endpoint-1-latency">login</a>`, `data-corrected-p99="805`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	in := &summary.Input{Endpoints: []summary.EndpointReport{
		{Name: "GET /items", RawMetric: "http_req_duration", Requests: 100, Raw: summary.Percentiles{P50: 20, P99: 20, P999: 20}, Corrected: summary.Percentiles{P50: 20, P99: 21, P999: 22}},
		{Name: "login", RawMetric: "http_req_duration", Requests: 100, Raw: summary.Percentiles{P50: 5, P99: 5, P999: 5}, Corrected: summary.Percentiles{P50: 5, P99: 806.5, P999: 809}},
	}, EndpointsFolded: 3}
	p, err = BuildPage(tl, in, false, "report")
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Endpoints.Rows[0]; r.Name != "login" || r.Corrected[1] != "806.5ms" || r.Corrected[2] != "809ms" || r.Chart == "" {
		t.Errorf("with the summary, login row %+v", r)
	}
	if !strings.Contains(p.Endpoints.Note, "end-of-test summary") || !strings.Contains(p.Endpoints.Note, "3 corrected_latency samples of names beyond the first 50") {
		t.Errorf("note %q", p.Endpoints.Note)
	}
}

// Names come from scripts and URLs: each is escaped wherever the page
// shows it, and reads back as it was.
func TestEndpointNamesAreEscaped(t *testing.T) {
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	hostile := []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`, `a&amp;b 'q' </td></tr>`, "nl\n\ttab é日本"}
	var batch []metrics.Sample
	for i, name := range hostile {
		tags := metrics.NewTags(map[string]string{"scenario": "s", "name": name})
		for k := range 3 {
			at := t0.Add(time.Duration(k) * time.Second)
			batch = append(batch,
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: float64(i + 1)},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: float64(10 * (i + 1))})
		}
	}
	a := NewAggregator(t0, time.Second)
	a.Add(batch)
	p, err := BuildPage(a.Snapshot(true), nil, false, "escaping")
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, bad := range []string{"<script>alert", "<img", "</td></tr>'"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	cells := regexp.MustCompile(`<td class="name"><a href="#endpoint-\d-latency">([^<]*)</a></td>`).FindAllStringSubmatch(page, -1)
	summaries := regexp.MustCompile(`<summary>([^<]*)</summary>`).FindAllStringSubmatch(page, -1)
	if len(cells) != len(hostile) || len(summaries) != len(hostile) {
		t.Fatalf("%d name cells and %d chart summaries, want %d each", len(cells), len(summaries), len(hostile))
	}
	// The slowest (the last) first.
	for i := range hostile {
		want := hostile[len(hostile)-1-i]
		if got := html.UnescapeString(cells[i][1]); got != want {
			t.Errorf("cell %d reads %q, want %q", i, got, want)
		}
		if got := html.UnescapeString(summaries[i][1]); got != want {
			t.Errorf("summary %d reads %q, want %q", i, got, want)
		}
	}
}
