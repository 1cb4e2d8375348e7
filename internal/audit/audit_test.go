package audit

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const target = "http://127.0.0.1:8080/"

// handoff is how long after its intended time k6 starts or drops an
// arrival in these outputs: the same for all, so the audit's placing of
// the schedule (the earliest-settled arrival on time) puts every arrival
// at its own time plus handoff.
const handoff = 0.03 // ms

// frozenOpen is k6's constant-arrival-rate against docs/DESIGN.md §7's
// frozen server: 80 arrivals/s (one every 12.5 ms) for 5.625 s, 450 in
// all, on one VU. Every iteration is one request; the VU is busy until its
// answer. Arrival 80 (1000 ms) meets the freeze and is answered at 1510;
// arrivals 81–120 (1012.5–1500 ms) find the VU busy and k6 drops them;
// arrival 121 (1512.5) starts. late delays the start of some arrivals by
// that many milliseconds (a VU's goroutine woken late).
func frozenOpen(meta bool, late map[int]float64) *k6Output { return frozenOpenN(meta, late, 450) }

// frozenOpenN is frozenOpen with n arrivals settled.
func frozenOpenN(meta bool, late map[int]float64, n int) *k6Output {
	return frozenOpenInto(newK6Output(meta), late, n)
}

// frozenOpenInto writes frozenOpenN's run into o.
func frozenOpenInto(o *k6Output, late map[int]float64, n int) *k6Output {
	free := 0.0
	iter := 0
	for i := range n {
		ti := 12.5 * float64(i)
		if free > ti {
			o.dropped(at(t0, ti+handoff), "open")
			continue
		}
		start := ti + handoff + late[i]
		end := frozen(start)
		o.request(at(t0, end), ms(end-start), "open", target, 1, iter)
		o.iteration(at(t0, start), at(t0, end), "open", 1, iter)
		free = end
		iter++
	}
	return o
}

func ms(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

const openOptions = `{"scenarios":{"open":{"executor":"constant-arrival-rate","rate":80,"timeUnit":"1s","duration":"5625ms","preAllocatedVUs":1,"maxVUs":1}}}`

// The arithmetic of frozenOpen, as the audit must charge it: each of the
// 410 requests its own time plus its arrival's lag (the 2 ms of arrival
// 200, else 0); each of the 40 drops the wait from its intended time to
// 1510, when the VU became free: 1510 − (1000 + 12.5j + handoff) for j =
// 1…40, from 497.47 down to 9.97 ms. 33 values exceed 100 ms: the 509.97
// ms request and the drops intended before 1410 ms (j ≤ 32).
func TestOpenChargesLagsAndDrops(t *testing.T) {
	for _, meta := range []bool{true, false} {
		t.Run(map[bool]string{true: "vu and iter", false: "no metadata"}[meta], func(t *testing.T) {
			late := map[int]float64{200: 2}
			res := audit(t, frozenOpen(meta, late), openOptions)
			sc := res.Scenarios[0]
			if sc.Intended != 450 || sc.OnTime != 409 || sc.Late != 1 || sc.Dropped != 40 || sc.K6Dropped != 40 || sc.Missing != 0 {
				t.Errorf("account %+v, want 450 intended, 409 on time, 1 late, 40 dropped (k6: 40), none missing", sc)
			}
			if exact := map[bool]int64{true: 410}[meta]; sc.LinkedExact != exact || sc.LinkedByTime != 410-exact || sc.LinkedByVU+sc.Unlinked != 0 {
				t.Errorf("links: %d exact, %d by vu, %d by time, %d none; want %d exact, the rest by time", sc.LinkedExact, sc.LinkedByVU, sc.LinkedByTime, sc.Unlinked, exact)
			}
			if want := at(t0, handoff); !sc.Anchor.Equal(want) || sc.MaxLag != 2*time.Millisecond {
				t.Errorf("schedule placed at %v with largest lag %v, want %v and 2ms", sc.Anchor, sc.MaxLag, want)
			}
			var want []float64
			free := 0.0
			for i := range 450 {
				ti := 12.5 * float64(i)
				if free > ti {
					want = append(want, free-(ti+handoff))
					continue
				}
				start := ti + handoff + late[i]
				end := frozen(start)
				want = append(want, end-start+late[i])
				free = end
			}
			got := values(res, metrics.CorrectedLatencyName, nil)
			if !sameValues(got, want) {
				t.Errorf("corrected_latency %v,\nwant %v", got, want)
			}
			lags := values(res, metrics.ScheduleLagName, nil)
			if len(lags) != 410 || slices.Max(lags) != 2 || countOver(lags, 0) != 1 {
				t.Errorf("%d schedule_lag values, max %v, %d above 0; want 410, one of 2 ms", len(lags), slices.Max(lags), countOver(lags, 0))
			}
			dropped := values(res, metrics.CorrectedLatencyName, map[string]string{"outcome": "dropped"})
			if len(dropped) != 40 {
				t.Errorf("%d corrected_latency values tagged outcome=dropped, want 40", len(dropped))
			}
			k6, aud := row(t, res, SourceK6, "scenario=open"), row(t, res, SourceAudit, "scenario=open")
			if k6.Count != 410 || k6.OverBound != 1 || aud.Count != 450 || aud.OverBound != 33 || countOver(want, 100) != 33 {
				t.Errorf("k6 row %d values, %d over 100 ms; audit row %d, %d over; want 410, 1; 450, 33", k6.Count, k6.OverBound, aud.Count, aud.OverBound)
			}
			if p99, wantP99 := aud.Percentiles["p99"], trendOf(want).Percentile(99); math.Abs(p99-wantP99) > 1e-9 || p99 < 450 {
				t.Errorf("audited p99 %v, want %v (the summary's estimator over the arithmetic's values)", p99, wantP99)
			}
		})
	}
}

// frozenClosed is docs/DESIGN.md §7's closed loop in k6: one VU of
// constant-vus for 5.625 s against the frozen server, each iteration one
// request and 2.5 ms of think time. Iteration 80 starts at 1000 ms, its
// request is answered at 1510 (510 ms); 410 iterations start before the
// end.
func frozenClosed(meta bool) *k6Output { return frozenClosedInto(newK6Output(meta)) }

// frozenClosedInto writes frozenClosed's run into o.
func frozenClosedInto(o *k6Output) *k6Output {
	start := 0.0
	for k := 0; start < 5625; k++ {
		end := frozen(start)
		o.request(at(t0, end), ms(end-start), "closed", target, 1, k)
		o.iteration(at(t0, start), at(t0, end+2.5), "closed", 1, k)
		start = end + 2.5
	}
	return o
}

// Back-filled per request at 12.5 ms (hand-set, or auto: the VU's interval
// between starts is 12.5 ms), the 510 ms request adds 497.5, 485, …, 22.5:
// 39 samples, 449 in all, 33 over 100 ms and a p99 of 454 ms — the
// executor's own numbers for the same loop (executor's
// TestFrozenServerClosedModelBackFilled).
func TestClosedBackFillsPerRequest(t *testing.T) {
	for _, meta := range []bool{true, false} {
		for _, interval := range []string{"12.5ms", "auto"} {
			name := map[bool]string{true: "vu and iter", false: "no metadata"}[meta] + "/" + interval
			t.Run(name, func(t *testing.T) {
				res := audit(t, frozenClosed(meta), `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"`+interval+`"}}}`)
				sc := res.Scenarios[0]
				if sc.Requests != 410 || sc.BackFill.Requests != 410 || sc.BackFill.Backfilled != 39 || sc.VUs != 1 || sc.VUsFromMetadata != meta {
					t.Errorf("account %+v, want 410 requests, 39 back-filled, 1 VU (from metadata: %v)", sc, meta)
				}
				filled := values(res, metrics.CorrectedLatencyName, map[string]string{"backfilled": "true"})
				all := values(res, metrics.CorrectedLatencyName, nil)
				if len(filled) != 39 || len(all) != 449 || slices.Max(filled) != 497.5 || slices.Min(filled) != 22.5 {
					t.Fatalf("%d back-filled of %d corrected_latency values, from %v to %v; want 39 of 449, 22.5 to 497.5", len(filled), len(all), slices.Min(filled), slices.Max(filled))
				}
				aud := row(t, res, SourceAudit, "scenario=closed")
				if p99 := aud.Percentiles["p99"]; aud.OverBound != 33 || math.Abs(p99-454) > 454*0.0005+0.0005 {
					t.Errorf("audited p99 %v, %d over 100 ms; want 454 and 33", p99, aud.OverBound)
				}
				if k6 := row(t, res, SourceK6, "scenario=closed"); k6.OverBound != 1 || k6.Percentiles["p99"] > 10.01 {
					t.Errorf("k6's p99 %v, %d over 100 ms; want 10 and 1: the closed loop hides the freeze", k6.Percentiles["p99"], k6.OverBound)
				}
				if auto := interval == "auto"; auto && (len(sc.BackFill.Estimates) != 1 || sc.BackFill.Estimates[0] != 12500*time.Microsecond || sc.BackFill.Unestimated != 5) {
					t.Errorf("estimates %v, %d iterations unestimated; want [12.5ms] and 5", sc.BackFill.Estimates, sc.BackFill.Unestimated)
				}
			})
		}
	}
}

// The summary is the one metronome prints, checks and groups included.
func TestSummaryHasChecks(t *testing.T) {
	out := frozenClosed(true)
	for k := range 3 {
		out.point("checks", at(t0, 5000+float64(k)), float64(k%2), map[string]string{"scenario": "closed", "check": "is 200", "group": ""}, 1, 400)
	}
	res := audit(t, out, `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms"}}}`)
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "is 200") || !strings.Contains(text.String(), "1 out of 3") {
		t.Errorf("the summary does not show the check and its tally:\n%s", text.String())
	}
}

// A closed-model scenario whose expectedInterval is off (the default of
// the iterations executors) records no corrected_latency, as in metronome.
func TestClosedWithoutBackFill(t *testing.T) {
	res := audit(t, frozenClosed(true), `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"off"}}}`)
	if n := len(values(res, metrics.CorrectedLatencyName, nil)); n != 0 {
		t.Errorf("%d corrected_latency values, want none", n)
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil || !strings.Contains(text.String(), "expectedInterval is off") {
		t.Errorf("the account does not say why nothing was rebuilt (%v):\n%s", err, text.String())
	}
}

// k6 may settle a few arrivals due after the end of the duration (its
// timer fires before it notices the end): those due within overrunWindow
// of the end are audited as the schedule continued at its rate; more mean
// the options are not the run's.
func TestOpenPastTheEnd(t *testing.T) {
	res := audit(t, frozenOpenN(true, nil, 456), openOptions)
	if sc := res.Scenarios[0]; sc.Intended != 456 || sc.PastEnd != 6 || sc.OnTime != 416 || sc.Dropped != 40 || sc.MaxLag != 0 {
		t.Errorf("account %+v: want 456 intended, 6 past the end, 416 on time, 40 dropped, no lag", sc)
	}
	_, err := Audit(bytes.NewReader(frozenOpenN(true, nil, 460).b.Bytes()), "out.json", Options{Scenarios: scenarios(t, openOptions)})
	if err == nil || !strings.Contains(err.Error(), "the output holds 460 started and dropped iterations") {
		t.Errorf("10 arrivals past the end (125 ms at 80/s): err = %v, want the options questioned", err)
	}
}

// Options that do not match the run are an error when the output holds
// more arrivals than their schedule: the audit would charge the wrong
// ones. Fewer are counted as missing.
func TestOpenScheduleMismatch(t *testing.T) {
	out := frozenOpen(true, nil)
	_, err := Audit(bytes.NewReader(out.b.Bytes()), "out.json", Options{Scenarios: scenarios(t,
		`{"scenarios":{"open":{"executor":"constant-arrival-rate","rate":40,"timeUnit":"1s","duration":"5625ms","preAllocatedVUs":1}}}`)})
	if err == nil || !strings.Contains(err.Error(), "intends only 225") || !strings.Contains(err.Error(), "options of the run") {
		t.Errorf("err = %v, want the schedule's count and a hint at the run's options", err)
	}
	res := audit(t, out, `{"scenarios":{"open":{"executor":"constant-arrival-rate","rate":80,"timeUnit":"1s","duration":"6s","preAllocatedVUs":1}}}`)
	if sc := res.Scenarios[0]; sc.Intended != 480 || sc.Missing != 30 {
		t.Errorf("%d intended, %d missing; want 480 and 30", sc.Intended, sc.Missing)
	}
}

// audited is an audit with its rebuilt samples.
type audited struct {
	*Result
	rebuilt []metrics.Sample
}

// audit audits out with the options, keeping the rebuilt samples.
func audit(t *testing.T, out *k6Output, options string) audited {
	t.Helper()
	return auditWith(t, out.b.Bytes(), Options{Scenarios: scenarios(t, options), Log: true})
}

// auditWith audits in with o, keeping the rebuilt samples.
func auditWith(t *testing.T, in []byte, o Options) audited {
	t.Helper()
	var rebuilt []metrics.Sample
	o.rebuilt = func(s metrics.Sample) { rebuilt = append(rebuilt, s) }
	res, err := Audit(bytes.NewReader(in), "out.json", o)
	if err != nil {
		t.Fatal(err)
	}
	return audited{res, rebuilt}
}

// values returns the values of metric's samples whose tags hold sel.
func values(res audited, metric string, sel map[string]string) []float64 {
	var out []float64
	for _, s := range res.rebuilt {
		if s.Metric.Name != metric {
			continue
		}
		ok := true
		for k, v := range sel {
			if got, _ := s.Tags.Get(k); got != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s.Value)
		}
	}
	return out
}

// sameValues compares two multisets of milliseconds to the nanosecond.
func sameValues(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-6 {
			return false
		}
	}
	return true
}

func countOver(vs []float64, limit float64) int {
	n := 0
	for _, v := range vs {
		if v > limit {
			n++
		}
	}
	return n
}

func trendOf(vs []float64) *metrics.TrendSink {
	s := metrics.NewTrendSink()
	for _, v := range vs {
		s.AddValue(v)
	}
	return s
}

// row returns the row of source with labels.
func row(t *testing.T, res audited, source, labels string) Row {
	t.Helper()
	for _, r := range res.Rows {
		if r.Source == source && r.Labels == labels {
			return r
		}
	}
	t.Fatalf("no %s row for %s", source, labels)
	return Row{}
}

// The tables count intervals from one origin, the log's (the output's
// first sample), however out of time order k6 wrote its lines. Here a
// server answers in 10 ms and arrival 1's lines come before arrival 0's:
// the first sample is arrival 1's answer at 22.53 ms, arrival 0's at 10.03 ms falls before it and
// into the first interval, as in the log. Arrival 320's answer, the last,
// at 4010.03 ms, is in the interval 3 s after the origin (ending at
// 4022.53): four intervals. Counting some samples from the earliest time
// seen so far (10.03 ms) put it in a fifth.
func TestRowIntervalsHaveOneOrigin(t *testing.T) {
	o := newK6Output(true)
	for _, i := range append([]int{1, 0}, seq(2, 321)...) {
		start := 12.5*float64(i) + handoff
		o.request(at(t0, start+10), ms(10), "open", target, 1, i)
		o.iteration(at(t0, start), at(t0, start+10), "open", 1, i)
	}
	res := audit(t, o, openOptions)
	origin := at(t0, 12.5+handoff+10)
	for _, source := range []string{SourceK6, SourceAudit} {
		r := row(t, res, source, "scenario=open")
		if r.Intervals != 4 || !r.Start.Equal(origin) || !r.End.Equal(origin.Add(4*time.Second)) {
			t.Errorf("%s row: %d intervals from %v to %v, want 4 from %v", source, r.Intervals, r.Start, r.End, origin)
		}
	}
	var log bytes.Buffer
	if err := res.WriteLog(&log); err != nil {
		t.Fatal(err)
	}
	starts := map[string]bool{}
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.HasPrefix(l, "Tag=") && strings.Contains(l, "http_req_duration") {
			_, rest, _ := strings.Cut(l, ",")
			start, _, _ := strings.Cut(rest, ",")
			starts[start] = true
		}
	}
	if len(starts) != 4 {
		t.Errorf("the log holds http_req_duration in %d intervals, the table says 4:\n%s", len(starts), log.String())
	}
}

// seq returns the integers from lo up to hi, hi excluded.
func seq(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}
