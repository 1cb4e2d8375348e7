package dashboard

import (
	"bytes"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// requestsRun is an open model as the executor and the modules record it
// since corrected_latency is per request: each iteration sends two named
// requests, then sleeps, and executor.Deps.Account records its
// iteration_duration and schedule_lag at its end; arrivals of second 2
// waited 600 ms; one arrival a second is dropped.
func requestsRun(b *metrics.Builtin) []metrics.Sample {
	iter := metrics.NewTags(map[string]string{"scenario": "api"})
	dropped := iter.With("outcome", "dropped")
	var out []metrics.Sample
	for i := range 50 { // 10 arrivals a second for 5 s
		intended := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		lag := time.Duration(0)
		if i/10 == 2 {
			lag = 600 * time.Millisecond
		}
		if i%10 == 9 {
			out = append(out,
				metrics.Sample{Metric: b.DroppedIterations, Tags: iter, Time: intended.Add(50 * time.Millisecond), Value: 1},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: dropped, Time: intended.Add(50 * time.Millisecond), Value: 50})
			continue
		}
		start := intended.Add(lag)
		at := start
		for _, name := range []string{"login", "home"} {
			tags := iter.With("name", name)
			at = at.Add(5 * time.Millisecond)
			out = append(out,
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 5},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: 5 + float64(lag/time.Millisecond)})
		}
		end := at.Add(20 * time.Millisecond) // think time
		out = append(out,
			metrics.Sample{Metric: b.IterationDuration, Tags: iter, Time: end, Value: float64(end.Sub(start)) / float64(time.Millisecond)},
			metrics.Sample{Metric: b.Iterations, Tags: iter, Time: end, Value: 1},
			metrics.Sample{Metric: b.ScheduleLag, Tags: iter, Time: end, Value: float64(lag) / float64(time.Millisecond)})
	}
	return out
}

// Each arrival is placed by its intended start, from its iteration's
// duration and lag (its requests' corrected_latency samples carry their own
// tags and times), and its wait fills the backlog.
func TestArrivalsFromIterations(t *testing.T) {
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	a := NewAggregator(t0, time.Second)
	a.Add(requestsRun(b))
	a.Close(time.Time{})
	api := section(t, a.Snapshot(true), "api")
	if !api.HasIntended || !api.HasWait {
		t.Fatalf("api flags %+v", api)
	}
	for i := range 5 {
		r := api.Rows[i]
		// 9 completed and 1 dropped arrival intended each second.
		if r.Intended != 10 {
			t.Errorf("row %d: intended %v, want 10", i, r.Intended)
		}
		// The 9 arrivals intended at 2.0 … 2.8 s waited 600 ms each: those
		// after 2.4 s into second 3.
		want := map[int]float64{2: 5*600 + 500 + 400 + 300 + 200, 3: 100 + 200 + 300 + 400}[i]
		if r.WaitMs != want {
			t.Errorf("row %d: wait %v ms, want %v", i, r.WaitMs, want)
		}
	}
	var wait, completed float64
	for _, r := range api.Rows {
		wait += r.WaitMs
		completed += r.Completed
	}
	if wait != 9*600 || completed != 45 {
		t.Errorf("waits %v ms, completed %v; want %v and 45", wait, completed, 9*600)
	}
}

// A report from the run's log counts the intended arrivals as the
// completed ones (schedule_lag) and the dropped ones (outcome=dropped),
// not one per request.
func TestLogReaderCountsArrivals(t *testing.T) {
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	tl := logTimeline(t, requestsRun(b))
	var intended, dropped float64
	for _, r := range section(t, tl, "api").Rows {
		intended += r.Intended
		dropped += r.Dropped
	}
	if intended != 50 || dropped != 5 {
		t.Errorf("intended %v, dropped %v; want 50 and 5", intended, dropped)
	}
}

// logTimeline writes samples through the hdrlog output and returns the
// timeline `metronome report` reads back from the log.
func logTimeline(t *testing.T, samples []metrics.Sample) *Timeline {
	t.Helper()
	var log bytes.Buffer
	o, err := hdrlog.New(output.Params{Arg: "-", Stdout: &log, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	o.AddSamples(samples)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	var lr LogReader
	if err := lr.Add(&log, "run.hlog"); err != nil {
		t.Fatal(err)
	}
	tl, err := lr.Timeline(0)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}
