package counter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// CountsName is the output's name for -o.
const CountsName = "counts"

func init() { output.Register(CountsName, newCounts) }

// counts is the -o counts=FILE output: it counts the samples of each
// metric and, when the test ends, writes one line per metric, "NAME
// COUNT", sorted by name. Every metric of the run is listed, those that
// received no sample with 0. FILE "-" is standard output.
type counts struct {
	path   string
	stdout io.Writer
	reg    *metrics.Registry

	mu      sync.Mutex
	n       []int64           // samples per metric, by Metric.ID
	metrics []*metrics.Metric // the metric of each ID seen
	file    *os.File
}

func newCounts(p output.Params) (output.Output, error) {
	path := strings.TrimSpace(p.Arg)
	if path == "" {
		return nil, errors.New("counts output: name the file to write, as in -o counts=counts.txt (- for standard output)")
	}
	o := &counts{path: path, stdout: p.Stdout, reg: p.Registry}
	if o.stdout == nil {
		o.stdout = os.Stdout
	}
	return o, nil
}

// Description names the output and its destination.
func (o *counts) Description() string {
	if o.path == "-" {
		return CountsName + " (stdout)"
	}
	return CountsName + " (" + o.path + ")"
}

// Start creates the file, so that a path that cannot be written fails
// before the test begins rather than after it ended.
func (o *counts) Start() error {
	if o.path == "-" {
		return nil
	}
	f, err := os.Create(o.path)
	if err != nil {
		return fmt.Errorf("counts output: %w", err)
	}
	o.file = f
	return nil
}

// AddSamples counts a batch: one lock per batch, one slice increment per
// sample.
func (o *counts) AddSamples(batch []metrics.Sample) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range batch {
		m := batch[i].Metric
		if m == nil {
			continue
		}
		for len(o.n) <= m.ID {
			o.n = append(o.n, 0)
			o.metrics = append(o.metrics, nil)
		}
		o.n[m.ID]++
		o.metrics[m.ID] = m
	}
}

// Stop writes the lines and closes the file.
func (o *counts) Stop() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	count := map[string]int64{}
	if o.reg != nil {
		for _, m := range o.reg.All() {
			count[m.Name] = 0
		}
	}
	for id, m := range o.metrics {
		if m != nil {
			count[m.Name] += o.n[id]
		}
	}
	names := make([]string, 0, len(count))
	for name := range count {
		names = append(names, name)
	}
	slices.Sort(names)

	w := o.stdout
	if o.file != nil {
		w = o.file
	}
	bw := bufio.NewWriter(w)
	for _, name := range names {
		fmt.Fprintf(bw, "%s %d\n", name, count[name])
	}
	err := bw.Flush()
	if o.file != nil {
		if cerr := o.file.Close(); err == nil {
			err = cerr
		}
		o.file = nil
	}
	if err != nil {
		return fmt.Errorf("counts output: %w", err)
	}
	return nil
}
