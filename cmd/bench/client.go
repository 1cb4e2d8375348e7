//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// clientFigures are one client's figures per request over the runs of
// http1.BenchmarkClient: CPU time (ns), allocations and bytes allocated.
type clientFigures struct {
	cpu, allocs, bytes []float64
}

// measureClient reports what metronome's HTTP/1.1 client (http1) saves per
// request against net/http's Transport, which k6 uses:
// http1.BenchmarkClient sends the same GET to the same loopback server (a
// child process, so that the CPU and allocations counted are the
// client's) through each. The test binary is built once and each client
// runs clientReps times, alternating, the order swapped every round so
// that a drift of the machine's other load spreads over both.
func (b *bench) measureClient(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	bin := filepath.Join(b.dir, "http1.test")
	build := exec.CommandContext(ctx, b.goCmd, "test", "-c", "-o", bin, "./internal/http1")
	build.Dir = b.repo
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(build.Args, " "), err, out)
	}
	b.logf("client: load average %s; %s, then %d runs of each client", loadAvg(), strings.Join(build.Args, " "), clientReps)
	var all []byte
	for rep := range clientReps {
		order := []string{"http1", "net-http"}
		if rep%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, client := range order {
			cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", "^BenchmarkClient$/^"+client+"$",
				"-test.benchmem", "-test.benchtime", "20000x")
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
			}
			all = append(all, out...)
		}
	}
	figs, err := parseClientBench(all)
	if err != nil {
		return err
	}
	h1, nh := figs["http1"], figs["net-http"]
	b.add(compare("client: CPU per request, http1 against net/http's Transport", "cpu-ns", h1.cpu, "net/http", nh.cpu,
		ratioAtMost(1, "< net/http's")))
	b.add(compare("client: allocations per request", "allocs", h1.allocs, "net/http", nh.allocs, nil))
	b.add(compare("client: bytes allocated per request", "B", h1.bytes, "net/http", nh.bytes, nil))
	saved := median(nh.cpu) - median(h1.cpu)
	b.add(row{Measure: "client: CPU http1 saves per request", Value: saved, Unit: "cpu-ns",
		Note: fmt.Sprintf("medians of %d runs each, BenchmarkClient in http1; the loopback server's CPU is not counted", clientReps)})
	return nil
}

// clientReps is how many times the client measure runs each client.
const clientReps = 5

// clientLine is a result line of http1.BenchmarkClient with -benchmem.
var clientLine = regexp.MustCompile(`^BenchmarkClient/(\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) cpu-ns/op\s+([\d.]+) B/op\s+([\d.]+) allocs/op`)

// parseClientBench reads the figures of both clients from go test's
// output; it fails unless both are there.
func parseClientBench(out []byte) (map[string]*clientFigures, error) {
	figs := map[string]*clientFigures{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := clientLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var v [3]float64
		for i := range v {
			f, err := strconv.ParseFloat(m[i+2], 64)
			if err != nil {
				return nil, fmt.Errorf("BenchmarkClient: %q: %v", sc.Text(), err)
			}
			v[i] = f
		}
		f := figs[m[1]]
		if f == nil {
			f = &clientFigures{}
			figs[m[1]] = f
		}
		f.cpu, f.bytes, f.allocs = append(f.cpu, v[0]), append(f.bytes, v[1]), append(f.allocs, v[2])
	}
	if figs["http1"] == nil || figs["net-http"] == nil {
		return nil, fmt.Errorf("no BenchmarkClient results for both http1 and net-http in:\n%s", out)
	}
	return figs, nil
}
