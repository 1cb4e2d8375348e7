//go:build unix

package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// The comparisons' load shapes and targets (issues #15 and #18).
const (
	closedVUs = 50 // VUs, connections or goroutines in the closed loop
	// openConns is the VUs of metronome's open model, wrk2's connections
	// and the floor client's goroutines: the same for all three.
	openConns = 50
	// wrk2Calibration is how long wrk2 measures before it resets its
	// histograms: 10 s plus 5 ms per connection of a thread (25 of 50 on
	// two threads), rounded up. wrk2 runs this much longer than the others
	// so that all three record the same length of schedule.
	wrk2Calibration = 11 * time.Second
	wrk2Threads     = 2
)

// Targets of the comparisons: metronome / peer.
var (
	goalCPU        = ratioAtMost(1.0/4, "≤ 1/4 of k6's")
	goalCPUWrk     = ratioAtMost(2, "≤ 2× wrk's")
	goalOpenCPU    = ratioAtMost(1.3, "≤ 1.3× closed")
	goalRate       = ratioAtLeast(2, "≥ 2× k6's")
	goalRSSClosed  = ratioAtMost(1, "≤ k6's")
	goalP99        = ratioAtMost(1, "≤ wrk2's")
	goalCompleted  = valueAtLeast(100, "100 %")
	openScriptVars = func(rate int, d time.Duration, summary string) []string {
		return []string{"-e", fmt.Sprintf("RATE=%d", rate), "-e", "DURATION=" + d.String(),
			"-e", fmt.Sprintf("VUS=%d", openConns), "-e", "SUMMARY_JSON=" + summary}
	}
)

// openScript runs the open model with as many VUs as wrk2 has connections
// and writes handleSummary's data, which holds the arrival account
// (data.metronome.scenarios), to SUMMARY_JSON.
const openScript = `import http from 'k6/http';
export const options = {
  scenarios: {
    open: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE),
      timeUnit: '1s',
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS),
      maxVUs: Number(__ENV.VUS),
      gracefulStop: '10s',
    },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(99)', 'p(99.9)', 'count'],
};
export default function () { http.get(__ENV.TARGET); }
export function handleSummary(data) {
  return { [__ENV.SUMMARY_JSON]: JSON.stringify(data) };
}
`

// series collects one figure per run of each generator.
type series map[string][]float64

func (s series) add(gen string, v float64) { s[gen] = append(s[gen], v) }

// runs lists each named generator's figures, in run order, for a note:
// "runs metronome 17.2/18.0/16.9, k6 55.1/54.0/56.2"; generators without
// runs are left out.
func (s series) runs(gens ...string) string {
	var parts []string
	for _, g := range gens {
		if len(s[g]) > 0 {
			parts = append(parts, g+" "+joinRuns(s[g]))
		}
	}
	return "runs " + strings.Join(parts, ", ")
}

// rotation returns the generators in the order of repetition rep: each
// starts one place later than in the previous repetition, so that every
// generator runs first, second … equally often and a drift of the
// machine's other load spreads over all of them.
func rotation(gens []string, rep int) []string {
	out := make([]string, len(gens))
	for i := range gens {
		out[i] = gens[(i+rep)%len(gens)]
	}
	return out
}

// versus adds the rows comparing metronome with each present peer on one
// measure; a peer without runs gives a row that says it was skipped.
func (b *bench) versus(measure, unit string, s series, note string, vs ...vsPeer) {
	for _, v := range vs {
		if len(s[v.peer]) == 0 {
			b.add(row{Measure: measure, Unit: unit, Value: median(s["metronome"]), Runs: s["metronome"],
				Note: v.peer + " absent, not compared"})
			continue
		}
		r := compare(measure, unit, s["metronome"], v.peer, s[v.peer], v.goal)
		r.Note = note
		b.add(r)
	}
}

// vsPeer names a peer to compare with and the target, if any.
type vsPeer struct {
	peer string
	goal *goal
}

// measureClosed runs the one-GET closed loop at 50 VUs (50 connections for
// wrk) alternately with metronome, k6 and wrk: CPU time per iteration,
// iterations/s and peak RSS.
func (b *bench) measureClosed(ctx context.Context) error {
	d := b.dur(8 * time.Second)
	gens := []string{"metronome"}
	if b.peers.k6 != "" {
		gens = append(gens, "k6")
	}
	if b.peers.wrk != "" {
		gens = append(gens, "wrk")
	}
	gens = append(gens, "floor")
	cpu, rate, rss, srvCPU := series{}, series{}, series{}, series{}
	var loads []string
	for rep := range b.reps {
		for _, gen := range rotation(gens, rep) {
			var n, perSec float64
			var pr *procResult
			switch gen {
			case "wrk":
				p, err := b.spawn(ctx, "closed-wrk", d+90*time.Second, b.peers.wrk,
					"-t", fmt.Sprint(wrk2Threads), "-c", fmt.Sprint(closedVUs), "-d", d.String(), b.target)
				if err != nil {
					return err
				}
				w, err := parseWrk(p.Stdout)
				if err != nil {
					return fmt.Errorf("closed-wrk: %v", err)
				}
				if w.SocketErrors > 0 || w.Non2xx > 0 {
					return fmt.Errorf("closed-wrk: %d socket errors, %d non-2xx responses", w.SocketErrors, w.Non2xx)
				}
				n, perSec, pr = float64(w.Requests), w.RequestsPerSec, p
			case "floor":
				f, p, err := b.runClosedFloor(ctx, d)
				if err != nil {
					return err
				}
				n, perSec, pr = float64(f.Iterations), f.PerSecond, p
			default:
				bin := b.bin
				if gen == "k6" {
					bin = b.peers.k6
				}
				res, err := b.runScript(ctx, bin, load{
					name: "closed-" + gen, script: getScript, summary: "closed.json",
					args:  []string{"-u", fmt.Sprint(closedVUs), "-d", d.String(), "-q", "--summary-export", "closed.json"},
					limit: d + 90*time.Second,
				})
				if err != nil {
					return err
				}
				if n, err = res.mustMetric("iterations", "count"); err != nil {
					return fmt.Errorf("closed-%s: %v", gen, err)
				}
				if perSec, err = res.mustMetric("iterations", "rate"); err != nil {
					return fmt.Errorf("closed-%s: %v", gen, err)
				}
				if failed, _ := res.metric("http_req_failed", "value"); failed > 0 {
					return fmt.Errorf("closed-%s: %.2f%% of requests failed", gen, 100*failed)
				}
				pr = &res.procResult
			}
			if n <= 0 {
				return fmt.Errorf("closed-%s completed no iteration", gen)
			}
			cpu.add(gen, us(pr.CPU)/n)
			rate.add(gen, perSec)
			rss.add(gen, float64(pr.MaxRSS)/mb)
			srvCPU.add(gen, us(pr.ServerCPU)/n)
			loads = append(loads, pr.Load)
		}
	}
	b.iterationCPU = 1e3 * (median(cpu["metronome"]) + median(srvCPU["metronome"]))
	b.closedCPU = cpu
	label := fmt.Sprintf("closed %d VUs, 1 GET, %s: ", closedVUs, d)
	b.versus(label+"CPU per iteration", "µs", cpu,
		fmt.Sprintf("%s; server %.1f µs/iteration", cpu.runs("metronome", "k6", "wrk", "floor"), median(srvCPU["metronome"])),
		vsPeer{"k6", goalCPU}, vsPeer{"wrk", goalCPUWrk}, vsPeer{"floor", nil})
	b.versus(label+"iterations/s", "/s", rate,
		rate.runs("metronome", "k6", "wrk", "floor"),
		vsPeer{"k6", goalRate}, vsPeer{"wrk", nil}, vsPeer{"floor", nil})
	b.versus(label+"peak RSS", "MB", rss, "load "+loadRange(loads),
		vsPeer{"k6", goalRSSClosed}, vsPeer{"wrk", nil})
	return nil
}

// openRun is one open-model run's corrected percentiles (ms), the share
// of arrivals completed (%), for metronome and the floor the schedule lag
// p99 (ms), and the generator's CPU time per request completed (µs).
type openRun struct {
	p50, p99, p999, completed, lagP99, cpu float64
}

// measureOpen runs the open model at each rate alternately with
// metronome (intended-arrival-rate), wrk2 (-R) and the floor client, all
// with 50 connections, and compares corrected latency percentiles and the
// arrivals completed.
func (b *bench) measureOpen(ctx context.Context) error {
	d := b.dur(8 * time.Second)
	gens := []string{"metronome", "floor"}
	if b.peers.wrk2 != "" {
		gens = []string{"metronome", "wrk2", "floor"}
	}
	for _, rate := range b.rates {
		p50, p99, p999, done, lag, cpu := series{}, series{}, series{}, series{}, series{}, series{}
		var loads []string
		for rep := range b.reps {
			for _, gen := range rotation(gens, rep) {
				var r openRun
				var load string
				var err error
				switch gen {
				case "metronome":
					r, load, err = b.openMetronome(ctx, rate, d)
				case "wrk2":
					r, load, err = b.openWrk2(ctx, rate, d)
				case "floor":
					var fr *floorResult
					var pr *procResult
					fr, pr, err = b.runFloor(ctx, rate, d)
					if err == nil {
						load = pr.Load
						r = openRun{p50: fr.CorrectedMed, p99: fr.CorrectedP99, p999: fr.CorrectedP999,
							completed: 100 * float64(fr.Completed) / float64(fr.Intended), lagP99: fr.P99,
							cpu: us(pr.CPU) / float64(fr.Completed)}
					}
				}
				if err != nil {
					return err
				}
				p50.add(gen, r.p50)
				p99.add(gen, r.p99)
				p999.add(gen, r.p999)
				done.add(gen, r.completed)
				cpu.add(gen, r.cpu)
				if gen != "wrk2" {
					lag.add(gen, r.lagP99)
				}
				loads = append(loads, load)
			}
		}
		label := fmt.Sprintf("open %d/s, %d conns, %s: ", rate, openConns, d)
		runs := func(s series) string { return s.runs("metronome", "wrk2", "floor") }
		b.versus(label+"corrected p50", "ms", p50, runs(p50), vsPeer{"wrk2", nil})
		b.versus(label+"corrected p99", "ms", p99, runs(p99)+"; load "+loadRange(loads), vsPeer{"wrk2", goalP99}, vsPeer{"floor", nil})
		b.versus(label+"corrected p99.9", "ms", p999, runs(p999), vsPeer{"wrk2", nil})
		b.versus(label+"arrivals completed", "%", done, runs(done), vsPeer{"wrk2", goalCompleted}, vsPeer{"floor", nil})
		b.versus(label+"schedule lag p99", "ms", lag, runs(lag), vsPeer{"floor", nil})
		b.versus(label+"CPU per request", "µs", cpu, runs(cpu), vsPeer{"wrk2", nil}, vsPeer{"floor", nil})
		b.openVersusClosed(label, cpu)
	}
	return nil
}

// openVersusClosed adds the row comparing metronome's CPU time per request
// in the open model with its CPU time per iteration in the closed loop
// (issue #31: at most 1.3 times), with wrk2's open-model CPU against wrk's
// closed loop in the note for reference: the same ratio for a C generator
// on the same machine. Without the closed measure it says so.
func (b *bench) openVersusClosed(label string, open series) {
	measure := label + "CPU per request / closed loop's"
	if len(b.closedCPU["metronome"]) == 0 {
		b.add(row{Measure: measure, Unit: "µs", Value: median(open["metronome"]), Runs: open["metronome"],
			Note: "closed measure not run, not compared"})
		return
	}
	r := compare(measure, "µs", open["metronome"], "closed", b.closedCPU["metronome"], goalOpenCPU)
	r.Note = "metronome open / metronome closed"
	if len(open["wrk2"]) > 0 && len(b.closedCPU["wrk"]) > 0 {
		r.Note += fmt.Sprintf("; wrk2 open / wrk closed %s (%.1f / %.1f µs)",
			formatRatio(ratioOf(median(open["wrk2"]), median(b.closedCPU["wrk"]))), median(open["wrk2"]), median(b.closedCPU["wrk"]))
	}
	b.add(r)
}

// openMetronome runs metronome's intended-arrival-rate at rate for d.
func (b *bench) openMetronome(ctx context.Context, rate int, d time.Duration) (openRun, string, error) {
	name := fmt.Sprintf("open-%d-metronome", rate)
	res, err := b.run(ctx, load{
		name: name, script: openScript, summary: "open.json",
		args:  append([]string{"-q"}, openScriptVars(rate, d, "open.json")...),
		limit: d + 90*time.Second,
	})
	if err != nil {
		return openRun{}, "", err
	}
	r, err := openFigures(res.Summary, float64(rate)*d.Seconds())
	if err != nil {
		return openRun{}, "", fmt.Errorf("%s: %v", name, err)
	}
	n, _ := res.mustMetric("iterations", "count")
	r.cpu = us(res.CPU) / n
	return r, res.Load, nil
}

// openFigures reads an open-model run's figures from the data object
// metronome's handleSummary received: corrected_latency's median, p(99)
// and p(99.9), schedule_lag's p(99), and the iterations completed as a
// share of the arrivals the scenario intended (its account in
// data.metronome.scenarios[0]; planned when the account is missing).
func openFigures(summary map[string]any, planned float64) (openRun, error) {
	res := loadResult{Summary: summary}
	completed, err := res.mustMetric("iterations", "count")
	if err != nil {
		return openRun{}, err
	}
	intended := planned
	if mt, ok := res.Summary["metronome"].(map[string]any); ok {
		if scs, ok := mt["scenarios"].([]any); ok && len(scs) > 0 {
			if acct, ok := scs[0].(map[string]any); ok {
				if v, ok := acct["intended"].(float64); ok && v > 0 {
					intended = v
				}
			}
		}
	}
	var r openRun
	for _, m := range []struct {
		metric, stat string
		to           *float64
	}{
		{"corrected_latency", "med", &r.p50}, {"corrected_latency", "p(99)", &r.p99},
		{"corrected_latency", "p(99.9)", &r.p999}, {"schedule_lag", "p(99)", &r.lagP99},
	} {
		if *m.to, err = res.mustMetric(m.metric, m.stat); err != nil {
			return openRun{}, err
		}
	}
	r.completed = 100 * completed / intended
	return r, nil
}

// openWrk2 runs wrk2 at rate for its calibration plus d, so that its
// histogram, reset after calibration, covers d like the others'.
func (b *bench) openWrk2(ctx context.Context, rate int, d time.Duration) (openRun, string, error) {
	name := fmt.Sprintf("open-%d-wrk2", rate)
	total := wrk2Calibration + d
	pr, err := b.spawn(ctx, name, total+90*time.Second, b.peers.wrk2,
		"-t", fmt.Sprint(wrk2Threads), "-c", fmt.Sprint(openConns), "-d", fmt.Sprintf("%.0fs", total.Seconds()),
		"-R", fmt.Sprint(rate), "--latency", "-U", b.target)
	if err != nil {
		return openRun{}, "", err
	}
	w, err := parseWrk(pr.Stdout)
	if err != nil {
		return openRun{}, "", fmt.Errorf("%s: %v", name, err)
	}
	for _, p := range []float64{50, 99, 99.9} {
		if _, ok := w.Latency[p]; !ok {
			return openRun{}, "", fmt.Errorf("%s printed no corrected p%g (its --latency block)", name, p)
		}
	}
	r := openRun{p50: w.Latency[50], p99: w.Latency[99], p999: w.Latency[99.9], lagP99: math.NaN()}
	if w.SocketErrors > 0 || w.Non2xx > 0 {
		return openRun{}, "", fmt.Errorf("%s: %d socket errors, %d non-2xx responses", name, w.SocketErrors, w.Non2xx)
	}
	r.completed = 100 * float64(w.Requests) / (float64(rate) * total.Seconds())
	r.cpu = us(pr.CPU) / float64(w.Requests)
	return r, pr.Load, nil
}

// loadRange is the lowest and highest 1-minute load average of some runs.
func loadRange(loads []string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range loads {
		var v float64
		if _, err := fmt.Sscan(l, &v); err == nil {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return "?"
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}
