// Package file is a results file written in the background: opened in
// Start, batches queued by Add, encoded and flushed every interval and at
// Stop, gzip-compressed when the name ends in .gz. The file outputs (json,
// csv) share it and differ only in their Encoder.
package file

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
)

// Encoder turns batches into the file's bytes. The Writer calls it from
// one goroutine at a time, so it needs no locking.
type Encoder interface {
	// Begin is called once, by Start, with the destination; it may write
	// a header.
	Begin(w io.Writer) error
	// Encode encodes one batch, skipping samples without a metric, and
	// returns the first write error.
	Encode(batch []metrics.Sample) error
	// Flush writes out whatever Encode buffered.
	Flush() error
}

// Config says where the file goes and how errors read.
type Config struct {
	// Name is the file to create; "-" means Stdout.
	Name string
	// Stdout is where "-" writes; nil means os.Stdout.
	Stdout io.Writer
	// Interval is how often queued batches are encoded and written.
	Interval time.Duration
	// Prefix starts every error message, e.g. "json output".
	Prefix string
	// Description names the destination in write errors, e.g.
	// "json (results.json)".
	Description string
	// Logf reports the first write error; nil discards it.
	Logf func(format string, args ...any)
}

// Writer queues batches and writes them in the background. After the first
// write error later samples are dropped and Stop returns that error.
type Writer struct {
	cfg Config
	enc Encoder

	mu       sync.Mutex
	pending  [][]metrics.Sample
	stopped  bool
	stopOnce sync.Once

	// Owned by the writing goroutine (and by Stop once it has ended).
	spare [][]metrics.Sample
	gz    *gzip.Writer
	file  *os.File
	err   error
	stop  chan struct{}
	done  chan struct{}
}

// New returns a Writer that has not opened anything yet.
func New(cfg Config, enc Encoder) *Writer {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Writer{cfg: cfg, enc: enc}
}

// Start opens the destination, lets the encoder begin it and starts the
// writing goroutine.
func (w *Writer) Start() error {
	var dst io.Writer
	if w.cfg.Name == "-" {
		dst = w.cfg.Stdout
		if dst == nil {
			dst = os.Stdout
		}
	} else {
		f, err := os.Create(w.cfg.Name)
		if err != nil {
			if u := errors.Unwrap(err); u != nil {
				err = u // the *PathError's message would repeat the name
			}
			return fmt.Errorf("%s: cannot create %s: %w", w.cfg.Prefix, w.cfg.Name, err)
		}
		w.file = f
		dst = f
		if strings.HasSuffix(w.cfg.Name, ".gz") {
			w.gz = gzip.NewWriter(f)
			dst = w.gz
		}
	}
	if err := w.enc.Begin(dst); err != nil {
		if w.file != nil {
			w.file.Close()
			w.file, w.gz = nil, nil
		}
		return fmt.Errorf("%s: writing the header of %s: %w", w.cfg.Prefix, w.cfg.Name, err)
	}
	w.stop = make(chan struct{})
	w.done = make(chan struct{})
	go w.run()
	return nil
}

// Add queues a batch for the next tick. It only appends the slice under a
// short lock; the batch must not change until it has been written. Batches
// added after Stop are dropped.
func (w *Writer) Add(batch []metrics.Sample) {
	if len(batch) == 0 {
		return
	}
	w.mu.Lock()
	if !w.stopped {
		w.pending = append(w.pending, batch)
	}
	w.mu.Unlock()
}

func (w *Writer) run() {
	defer close(w.done)
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.flush()
		case <-w.stop:
			return
		}
	}
}

// flush encodes the queued batches and writes them out.
func (w *Writer) flush() {
	w.mu.Lock()
	batches := w.pending
	w.pending = w.spare[:0]
	w.mu.Unlock()

	for i, batch := range batches {
		if w.err == nil {
			if err := w.enc.Encode(batch); err != nil {
				w.fail(err)
			}
		}
		batches[i] = nil
	}
	w.spare = batches
	if w.err == nil {
		if err := w.enc.Flush(); err != nil {
			w.fail(err)
		}
	}
}

// fail records the first write error and logs it once.
func (w *Writer) fail(err error) {
	w.err = fmt.Errorf("%s: writing %s: %w", w.cfg.Prefix, w.cfg.Description, err)
	w.cfg.Logf("%v; no more samples will be written", w.err)
}

// Stop writes what is queued, then closes the file. Calling it again
// returns the first call's result.
func (w *Writer) Stop() error {
	w.stopOnce.Do(w.shutdown)
	return w.err
}

func (w *Writer) shutdown() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	if w.stop == nil { // never started
		return
	}
	close(w.stop)
	<-w.done
	w.flush()
	if w.gz != nil {
		if err := w.gz.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("%s: compressing %s: %w", w.cfg.Prefix, w.cfg.Name, err)
		}
	}
	if w.file != nil {
		if err := w.file.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("%s: closing %s: %w", w.cfg.Prefix, w.cfg.Name, err)
		}
	}
}
