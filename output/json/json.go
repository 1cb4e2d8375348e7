// Package json is the -o json output: every sample as a line of JSON, in
// k6's format, so tools that read k6's JSON results read metronome's.
//
//	-o json=results.json      a file
//	-o json=results.json.gz   gzip-compressed
//	-o json=- (or -o json)    standard output
//
// The first sample of each metric is preceded by a Metric line describing
// it (name, type, contains, thresholds, thresholded submetrics); every
// sample is a Point line with its time (RFC 3339 with nanoseconds, local
// time), value, tags and, when present, metadata. Lines are written every
// 200ms and when the run ends.
package json

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// FlushInterval is how often buffered lines are written out.
const FlushInterval = 200 * time.Millisecond

// writeSize is how many encoded bytes are gathered before one write.
const writeSize = 64 << 10

func init() { output.Register("json", New) }

// Output writes samples as JSON lines.
type Output struct {
	params output.Params
	name   string // file name, "" for standard output

	mu       sync.Mutex
	pending  [][]metrics.Sample
	stopped  bool
	stopOnce sync.Once

	// Owned by the writing goroutine (and by Stop once it has ended).
	enc   *encoder
	buf   []byte
	spare [][]metrics.Sample
	w     io.Writer
	gz    *gzip.Writer
	file  *os.File
	err   error
	stop  chan struct{}
	done  chan struct{}
}

// New builds the output from -o json=ARG.
func New(p output.Params) (output.Output, error) {
	name := strings.TrimSpace(p.Arg)
	if name == "-" {
		name = ""
	}
	if p.Logf == nil {
		p.Logf = func(string, ...any) {}
	}
	return &Output{params: p, name: name, enc: newEncoder(p.Thresholds)}, nil
}

// Description names the output and its destination.
func (o *Output) Description() string {
	if o.name == "" {
		return "json (stdout)"
	}
	return "json (" + o.name + ")"
}

// Start opens the destination and starts the writer.
func (o *Output) Start() error {
	var w io.Writer
	if o.name == "" {
		w = o.params.Stdout
		if w == nil {
			w = os.Stdout
		}
	} else {
		f, err := os.Create(o.name)
		if err != nil {
			if u := errors.Unwrap(err); u != nil {
				err = u
			}
			return fmt.Errorf("json output: cannot create %s: %w", o.name, err)
		}
		o.file = f
		w = f
		if strings.HasSuffix(o.name, ".gz") {
			o.gz = gzip.NewWriter(f)
			w = o.gz
		}
	}
	o.w = w
	o.stop = make(chan struct{})
	o.done = make(chan struct{})
	go o.run()
	return nil
}

// AddSamples queues a batch; the writer encodes it on its next tick. It
// only appends the slice under a short lock.
func (o *Output) AddSamples(batch []metrics.Sample) {
	if len(batch) == 0 {
		return
	}
	o.mu.Lock()
	if !o.stopped {
		o.pending = append(o.pending, batch)
	}
	o.mu.Unlock()
}

func (o *Output) run() {
	defer close(o.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			o.flush()
		case <-o.stop:
			return
		}
	}
}

// flush encodes the queued batches and writes them out.
func (o *Output) flush() {
	o.mu.Lock()
	batches := o.pending
	o.pending = o.spare[:0]
	o.mu.Unlock()

	for i, batch := range batches {
		if o.err == nil {
			for j := range batch {
				if batch[j].Metric == nil {
					continue
				}
				o.buf = o.enc.appendSample(o.buf, &batch[j])
				if len(o.buf) >= writeSize {
					o.write()
				}
			}
		}
		batches[i] = nil
	}
	o.spare = batches
	o.write()
}

func (o *Output) write() {
	if o.err == nil && len(o.buf) > 0 {
		if _, err := o.w.Write(o.buf); err != nil {
			o.fail(err)
		}
	}
	o.buf = o.buf[:0]
}

// fail records the first write error; later samples are dropped.
func (o *Output) fail(err error) {
	o.err = fmt.Errorf("json output: writing %s: %w", o.Description(), err)
	o.params.Logf("%v; no more samples will be written", o.err)
}

// Stop writes what is queued, then closes the file. Calling it again
// returns the first call's result.
func (o *Output) Stop() error {
	o.stopOnce.Do(o.shutdown)
	return o.err
}

func (o *Output) shutdown() {
	o.mu.Lock()
	o.stopped = true
	o.mu.Unlock()
	if o.stop == nil { // never started
		return
	}
	close(o.stop)
	<-o.done
	o.flush()
	if o.gz != nil {
		if err := o.gz.Close(); err != nil && o.err == nil {
			o.err = fmt.Errorf("json output: compressing %s: %w", o.name, err)
		}
	}
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.err == nil {
			o.err = fmt.Errorf("json output: closing %s: %w", o.name, err)
		}
	}
}
