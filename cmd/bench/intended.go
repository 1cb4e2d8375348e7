//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The intended measure (issue #40): what jslib/intended.js adds to stock
// k6's CPU per iteration. Its users are the ones who must stay on k6, so
// it runs in k6 only, beside the same load without the library: a one-GET
// iteration at 1,000 arrivals/s on 10 VUs, k6's constant-arrival-rate for
// plain k6 and the library's intendedScenario and wrap for the other.
const (
	intendedRate = 1000
	intendedVUs  = 10
)

// goalIntended is the target: the library's CPU per iteration in stock
// k6 at most 1.2 times plain k6's.
var goalIntended = ratioAtMost(1.2, "≤ 1.2× plain k6's")

// plainRateScript is the load without the library.
const plainRateScript = `import http from 'k6/http';
export const options = { scenarios: { api: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE),
  timeUnit: '1s', duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) } } };
export default function () { http.get(__ENV.TARGET); }
`

// intendedScript is the same load through jslib/intended.js, which the
// measure copies beside it.
const intendedScript = `import http, { intendedScenario, wrap } from './intended.js';
export const options = { scenarios: { api: intendedScenario({ rate: Number(__ENV.RATE), duration: __ENV.DURATION,
  vus: Number(__ENV.VUS) }) } };
export default wrap(function () { http.get(__ENV.TARGET); });
`

// measureIntended runs both scripts with k6, alternating, each for a
// short and a long duration, and takes the CPU per iteration as the
// difference of the two runs' CPU time over the difference of their
// iterations: what start-up and the end of the test cost (compiling the
// library in every VU among them) is the same in both runs and drops out.
func (b *bench) measureIntended(ctx context.Context) error {
	if b.peers.k6 == "" {
		b.logf("intended: k6 absent, skipped (set K6_BINARY)")
		return nil
	}
	lib, err := os.ReadFile(filepath.Join(b.repo, "jslib", "intended.js"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.dir, "intended.js"), lib, 0o644); err != nil {
		return err
	}
	short, long := b.dur(2*time.Second), b.dur(8*time.Second)
	if long <= short {
		long = short + 2*time.Second
	}
	gens := []string{"intended", "plain"}
	scripts := map[string]string{"intended": intendedScript, "plain": plainRateScript}
	cpu := series{}
	var loads []string
	for rep := range b.reps {
		for _, gen := range rotation(gens, rep) {
			var used [2]time.Duration
			var iters [2]float64
			for i, d := range []time.Duration{short, long} {
				res, err := b.runScript(ctx, b.peers.k6, load{
					name: "intended-" + gen, script: scripts[gen], summary: "intended.json",
					args: []string{"-q", "--summary-export", "intended.json", "-e", fmt.Sprintf("RATE=%d", intendedRate),
						"-e", "DURATION=" + d.String(), "-e", fmt.Sprintf("VUS=%d", intendedVUs)},
					limit: d + 90*time.Second,
				})
				if err != nil {
					return err
				}
				if iters[i], err = res.mustMetric("iterations", "count"); err != nil {
					return fmt.Errorf("intended-%s: %v", gen, err)
				}
				used[i] = res.CPU
				loads = append(loads, res.Load)
			}
			if iters[1] <= iters[0] {
				return fmt.Errorf("intended-%s: %.0f iterations in %s, %.0f in %s: the longer run must do more",
					gen, iters[1], long, iters[0], short)
			}
			cpu.add(gen, us(used[1]-used[0])/(iters[1]-iters[0]))
		}
	}
	r := compare(fmt.Sprintf("intended.js in stock k6 / plain k6, %d/s, %d VUs, 1 GET: CPU per iteration",
		intendedRate, intendedVUs), "µs", cpu["intended"], "plain k6", cpu["plain"], goalIntended)
	r.Note = fmt.Sprintf("%s (%s less %s); load %s", cpu.runs("intended", "plain"), long, short, loadRange(loads))
	b.add(r)
	return nil
}
