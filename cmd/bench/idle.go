//go:build unix

package main

import (
	"context"
	"fmt"
	"math"
	"time"
)

// idleScript is sleepScript with a setup() that tells the loopback server
// when it runs: both generators initialise every VU before setup(), so the
// time from the process's start to that request is its start-up.
const idleScript = `import http from 'k6/http';
import { sleep } from 'k6';
export function setup() { http.get(__ENV.TARGET + 'started'); }
export default function () { sleep(1); }
`

// Targets of the idle measure (issues #31 and #40): peak RSS as a share of
// k6's at 10,000 and 100,000 VUs, the cost of an idle VU above the
// smallest run at 1/8 of k6's, and the wall time of the largest run. The
// 1,000-VU RSS target is retired: there the executables' own pages rule.
var (
	goalIdleByVUs = map[int]*goal{
		10_000:  ratioAtMost(1.0/6, "≤ 1/6 of k6's"),
		100_000: ratioAtMost(1.0/8, "≤ 1/8 of k6's"),
	}
	goalIdleWall  = map[int]*goal{100_000: ratioAtMost(0.5, "≤ ½ of k6's")}
	goalIdlePerVU = ratioAtMost(1.0/8, "≤ 1/8 of k6's")
)

// idleRun is what one idle run measured: peak RSS, peak anonymous RSS and
// the executable's resident pages (MB; 0 without /proc), those pages by
// ELF section, start-up and wall time (s).
type idleRun struct {
	rss, anon, exe, startup, wall float64
	sections                      string
}

// measureIdle runs each of the idle VU counts looping sleep(1) for 5 s
// alternately with metronome and k6 and compares their peak RSS, peak
// anonymous RSS, start-up (process start to setup()) and wall time; from
// the smallest count to each larger one it compares the cost per VU, the
// growth of the peak RSS divided by the VUs added.
func (b *bench) measureIdle(ctx context.Context) error {
	d := b.dur(5 * time.Second)
	gens := []string{"metronome"}
	if b.peers.k6 != "" {
		gens = append(gens, "k6")
	}
	type point struct {
		vus int
		rss series
	}
	var base *point // the smallest count, from which the cost per VU grows
	for _, vus := range b.idleVUs {
		rss, anon, exe, startup, wall := series{}, series{}, series{}, series{}, series{}
		var loads []string
		var sections string  // of metronome's last run
		worst := math.Inf(1) // the lowest share of possible iterations
		for rep := range b.reps {
			for _, gen := range rotation(gens, rep) {
				bin := b.bin
				if gen == "k6" {
					bin = b.peers.k6
				}
				run, share, load, err := b.idleRun(ctx, gen, bin, vus, d)
				if err != nil {
					return err
				}
				if gen == "metronome" {
					worst = min(worst, share)
				}
				rss.add(gen, run.rss)
				if run.anon > 0 {
					anon.add(gen, run.anon)
				}
				if run.exe > 0 {
					exe.add(gen, run.exe)
					if gen == "metronome" {
						sections = run.sections
					}
				}
				startup.add(gen, run.startup)
				wall.add(gen, run.wall)
				loads = append(loads, load)
			}
		}
		label := fmt.Sprintf("idle %d VUs sleep(1), %s: ", vus, d)
		b.versus(label+"peak RSS", "MB", rss,
			fmt.Sprintf("%s; metronome ran ≥ %.0f%% of the possible iterations; load %s",
				rss.runs("metronome", "k6"), 100*worst, loadRange(loads)),
			vsPeer{"k6", goalIdleByVUs[vus]})
		b.versus(label+"peak anonymous RSS", "MB", anon,
			anon.runs("metronome", "k6")+"; RSS less the executable's and libraries' pages",
			vsPeer{"k6", nil})
		b.versus(label+"executable's resident pages", "MB", exe,
			fmt.Sprintf("%s; metronome's by section (MB): %s", exe.runs("metronome", "k6"), sections),
			vsPeer{"k6", nil})
		b.versus(label+"start-up to setup()", "s", startup, startup.runs("metronome", "k6"),
			vsPeer{"k6", nil})
		b.versus(label+"wall time", "s", wall, wall.runs("metronome", "k6"),
			vsPeer{"k6", goalIdleWall[vus]})
		if base == nil || vus < base.vus {
			base = &point{vus, rss}
			continue
		}
		perVU := series{}
		for _, gen := range gens {
			from := median(base.rss[gen])
			for _, v := range rss[gen] {
				perVU.add(gen, (v-from)*1024/float64(vus-base.vus))
			}
		}
		b.versus(fmt.Sprintf("idle %d VUs: cost per VU above %d", vus, base.vus), "KB", perVU,
			fmt.Sprintf("(peak RSS − median peak RSS at %d VUs) / %d VUs; %s", base.vus, vus-base.vus,
				perVU.runs("metronome", "k6")),
			vsPeer{"k6", goalIdlePerVU})
	}
	return nil
}

// idleRun runs vus VUs looping sleep(1) for d with bin and returns what
// it measured, the share of the possible iterations it ran and the load
// average at its start.
func (b *bench) idleRun(ctx context.Context, gen, bin string, vus int, d time.Duration) (idleRun, float64, string, error) {
	name := fmt.Sprintf("idle-%d-%s", vus, gen)
	res, err := b.runScript(ctx, bin, load{
		name: name, script: idleScript, summary: "idle.json",
		args:  []string{"-u", fmt.Sprint(vus), "-d", d.String(), "-q", "--summary-export", "idle.json"},
		limit: d + 5*time.Minute,
	})
	if err != nil {
		return idleRun{}, 0, "", err
	}
	count, err := res.mustMetric("iterations", "count")
	if err != nil {
		return idleRun{}, 0, "", fmt.Errorf("%s: %v", name, err)
	}
	if res.Started.IsZero() {
		return idleRun{}, 0, "", fmt.Errorf("%s: setup() never reached the server", name)
	}
	run := idleRun{
		rss:      float64(res.MaxRSS) / mb,
		anon:     float64(res.MaxAnon) / mb,
		exe:      float64(total(res.Exe)) / mb,
		sections: sectionsText(res.Exe),
		startup:  res.Started.Sub(res.Start).Seconds(),
		wall:     res.Wall.Seconds(),
	}
	return run, count / (float64(vus) * d.Seconds()), res.Load, nil
}
