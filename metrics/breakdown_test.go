package metrics

import (
	"strconv"
	"testing"
	"time"
)

// A breakdown aggregates exactly the samples that carry its tag, one sink
// per value, up to MaxBreakdownValues values; the rest are counted.
func TestBreakdown(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{Breakdowns: []Breakdown{{Metric: CorrectedLatencyName, Tag: "name"}}})
	if err != nil {
		t.Fatal(err)
	}
	login := NewTags(map[string]string{"name": "login", "scenario": "a"})
	loginB := NewTags(map[string]string{"name": "login", "scenario": "b"})
	home := NewTags(map[string]string{"name": "home"})
	var batch []Sample
	add := func(tags *TagSet, vs ...float64) {
		for _, v := range vs {
			batch = append(batch, Sample{Metric: b.CorrectedLatency, Tags: tags, Time: time.Now(), Value: v})
		}
	}
	add(login, 1, 2, 3)
	add(home, 10)
	add(loginB, 4)
	add(EmptyTags.With("scenario", "a"), 100) // a dropped arrival: no name
	add(nil, 200)
	for i := range MaxBreakdownValues + 5 {
		add(EmptyTags.With("name", "n"+strconv.Itoa(i)), 7)
	}
	batch = append(batch, Sample{Metric: b.HTTPReqDuration, Tags: login, Value: 9})
	e.Ingest(batch)

	tag, parts, folded, ok := e.Breakdown(CorrectedLatencyName)
	if !ok || tag != "name" {
		t.Fatalf("Breakdown: %q, %v", tag, ok)
	}
	if len(parts) != MaxBreakdownValues || folded != 7 {
		t.Fatalf("%d values kept, %d samples folded; want %d and 7 (the last 7 names)", len(parts), folded, MaxBreakdownValues)
	}
	got := map[string]*TrendSink{}
	for _, p := range parts {
		got[p.Value] = p.Sink.(*TrendSink)
	}
	if s := got["login"]; s == nil || s.Count() != 4 || s.Sum() != 10 {
		t.Errorf("login: %+v, want the 4 samples of both scenarios summing to 10", s)
	}
	if s := got["home"]; s == nil || s.Count() != 1 || s.Max() != 10 {
		t.Errorf("home: %+v", s)
	}
	if _, _, _, ok := e.Breakdown(HTTPReqDurationName); ok {
		t.Errorf("http_req_duration has a breakdown nobody asked for")
	}
}

// Breaking a metric down adds no allocation to Ingest once its tag sets
// were seen.
func TestBreakdownDoesNotAllocate(t *testing.T) {
	reg := NewRegistry()
	b := RegisterBuiltin(reg)
	e, err := NewEngine(reg, EngineOptions{Breakdowns: []Breakdown{{Metric: CorrectedLatencyName, Tag: "name"}}})
	if err != nil {
		t.Fatal(err)
	}
	a, c := EmptyTags.With("name", "a"), EmptyTags.With("name", "c")
	batch := []Sample{{Metric: b.CorrectedLatency, Tags: a, Value: 1}, {Metric: b.CorrectedLatency, Tags: c, Value: 2}}
	e.Ingest(batch)
	if n := testing.AllocsPerRun(1000, func() { e.Ingest(batch) }); n != 0 {
		t.Errorf("%v allocations per Ingest", n)
	}
}
