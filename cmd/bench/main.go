//go:build unix

// Command bench measures metronome end to end side by side with its peers
// (k6, wrk2, wrk and a bare Go client), alternating runs on one loopback
// server: CPU per iteration, iterations/s and memory of a one-GET closed
// loop, corrected latency of the open model at 2,000–40,000 arrivals/s,
// memory, cost per VU and start-up of 1–10,000 idle VUs (100,000 on
// request); plus the memory of a Trend fed ten
// million samples, the cost of recording corrected_latency and
// schedule_lag, and what metronome's HTTP client saves per request against
// net/http's. It prints medians and ratios in one table and, with -out,
// writes the rows as JSON. See cmd/bench/README.md for the method.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report is what -out receives.
type report struct {
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished"`
	GoVersion string    `json:"go"`
	CPUs      int       `json:"cpus"`
	Metronome string    `json:"metronome"`
	Scale     float64   `json:"scale"`
	Reps      int       `json:"reps"`
	Peers     []string  `json:"peers"`
	LoadStart string    `json:"loadavg_start"`
	LoadEnd   string    `json:"loadavg_end"`
	Rows      []row     `json:"rows"`
}

// bench holds the settings and the collected rows of one bench run.
type bench struct {
	bin    string
	repo   string
	goCmd  string
	scale  float64
	pairs  int
	srv    *server // the loopback target
	target string  // its URL
	dir    string  // scratch directory for scripts and summaries
	log    io.Writer
	rows   []row

	peers   peers
	reps    int   // runs of each generator per comparison
	rates   []int // open-model arrivals/s
	idleVUs []int // idle VU counts

	// iterationCPU is metronome's plus the server's median CPU time per
	// closed-loop iteration (ns), for the cost relation; 0 until measured.
	iterationCPU float64
	// closedCPU is each closed-loop generator's CPU time per iteration
	// (µs) in the closed measure, the runs in order; the open measure
	// compares each open-model generator's CPU per request with it.
	closedCPU series
}

// A measure is one of the targets; it adds its rows to the bench.
type measure struct {
	name string
	run  func(*bench, context.Context) error
}

// measures in the order they run; -only selects some by name.
var measures = []measure{
	{"trend", (*bench).measureTrend},
	{"closed", (*bench).measureClosed},
	{"open", (*bench).measureOpen},
	{"idle", (*bench).measureIdle},
	{"cost", (*bench).measureCost},
	{"client", (*bench).measureClient},
	{"intended", (*bench).measureIntended},
}

// formerNames maps the measures' names before the comparison with the
// peers to the measures that now take them, so that older commands work.
var formerNames = map[string]string{"throughput": "closed", "memory": "idle", "floor": "open"}

func main() {
	var (
		bin   = flag.String("metronome", "bin/metronome", "the metronome binary to measure")
		out   = flag.String("out", "", "also write the results as JSON to this file")
		only  = flag.String("only", "", "comma-separated measures to run (trend, closed, open, idle, cost, client, intended); all when empty")
		reps  = flag.Int("reps", 3, "runs of metronome and of each peer per comparison, alternating; the medians are compared")
		rates = flag.String("rates", "2000,5000,10000,20000,40000", "the open model's arrivals per second, comma-separated")
		idle  = flag.String("idle-vus", "1,100,1000,10000", "the idle measure's VU counts, comma-separated (add 100000 for the largest case: k6 needs about 10 GB and a minute per run there)")
		scale = flag.Float64("scale", 1, "multiply every load duration by this (below 1 for a quick check; targets assume 1)")
		pairs = flag.Int("cost-pairs", 2, "A/B pairs of closed-loop runs for the end-to-end cost check (0 skips it)")
		repo  = flag.String("repo", ".", "the metronome module's root, where the Go micro-benchmarks run")
		goCmd = flag.String("go", "go", "the go command")

		// The open and closed measures run this program again as their
		// floor client.
		floor     = flag.String("floor", "", "run as the floor client against this URL (used by the floor measure)")
		floorRate = flag.Int("floor-rate", 10_000, "the floor client's arrivals per second")
		floorDur  = flag.Duration("floor-duration", 30*time.Second, "the floor client's duration")
		closedFl  = flag.Bool("floor-closed", false, "run the floor client as a closed loop on metronome's HTTP client (used by the closed measure)")
	)
	flag.Parse()
	if *floor != "" {
		run := func() error { return floorClient(*floor, *floorRate, *floorDur) }
		if *closedFl {
			run = func() error { return closedFloorClient(os.Stdout, *floor, *floorDur) }
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: floor client:", err)
			os.Exit(1)
		}
		return
	}
	if *scale <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -scale must be greater than 0")
		os.Exit(2)
	}
	if *reps < 1 {
		fmt.Fprintln(os.Stderr, "bench: -reps must be at least 1")
		os.Exit(2)
	}
	rateList, err := parseInts(*rates)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -rates:", err)
		os.Exit(2)
	}
	vuList, err := parseInts(*idle)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -idle-vus:", err)
		os.Exit(2)
	}
	selected := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if to, ok := formerNames[n]; ok {
				n = to
			}
			if !slices.ContainsFunc(measures, func(m measure) bool { return m.name == n }) {
				fmt.Fprintf(os.Stderr, "bench: -only: unknown measure %q\n", n)
				os.Exit(2)
			}
			selected[n] = true
		}
	}
	if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}
	if _, err := os.Stat(*bin); err != nil {
		fmt.Fprintf(os.Stderr, "bench: -metronome %s: %v (build it with `make build`)\n", *bin, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	dir, err := os.MkdirTemp("", "metronome-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)

	srv, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: starting the loopback server:", err)
		os.Exit(1)
	}
	defer srv.Close()

	b := &bench{bin: *bin, repo: *repo, goCmd: *goCmd, scale: *scale, pairs: *pairs,
		srv: srv, target: srv.URL, dir: dir, log: os.Stderr,
		peers: findPeers(ctx), reps: *reps, rates: rateList, idleVUs: vuList}
	// The generators run from copies in the scratch directory, written
	// alike: a binary the linker has just written maps 1.5–2 MB more of
	// itself at start than a copy of it (peak RSS at 1 VU), which would
	// tilt the memory figures against whichever was built last.
	for _, path := range []*string{&b.bin, &b.peers.k6} {
		if *path == "" {
			continue
		}
		if *path, err = copyExecutable(*path, dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
	rep := report{Started: time.Now(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Metronome: *bin, Scale: *scale, Reps: *reps, Peers: b.peers.lines, LoadStart: loadAvg()}
	for _, l := range b.peers.lines {
		b.logf("%s", l)
	}
	b.logf("load average %s; server %s", rep.LoadStart, b.target)

	failed := false
	for _, m := range measures {
		if len(selected) > 0 && !selected[m.name] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if err := m.run(b, ctx); err != nil {
			failed = true
			b.logf("%s: %v", m.name, err)
			first, _, _ := strings.Cut(err.Error(), "\n")
			b.rows = append(b.rows, row{Measure: m.name, Note: "error: " + first, Pass: boolp(false)})
		}
	}
	rep.Finished, rep.LoadEnd, rep.Rows = time.Now(), loadAvg(), b.rows

	printTable(os.Stdout, rep)
	if *out != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*out, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -out:", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

// add appends a row; a target of "" makes it informational.
func (b *bench) add(r row) { b.rows = append(b.rows, r) }

// dur scales a load duration, rounding to whole seconds (at least one).
func (b *bench) dur(d time.Duration) time.Duration {
	return max(time.Second, (time.Duration(float64(d) * b.scale)).Round(time.Second))
}

func boolp(v bool) *bool { return &v }

// parseInts reads a comma-separated list of positive integers.
func parseInts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// copyExecutable copies the executable at path into dir and returns the
// copy's path.
func copyExecutable(path, dir string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst := filepath.Join(dir, "bin-"+filepath.Base(path))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// loadAvg returns the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
