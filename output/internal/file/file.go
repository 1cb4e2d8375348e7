// Package file is a results file written in the background: opened in
// Start, batches queued by Add, encoded and flushed every interval and at
// Stop, gzip-compressed when the name ends in .gz. The queue and Stop's
// wait are bounded, and every sample that could not be written is counted
// in Stop's error. The file outputs (json, csv) share it and differ only
// in their Encoder.
package file

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
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

// Limits of what a Writer holds and how long it waits, so that a slow or
// stuck destination costs bounded memory and a bounded exit wait.
const (
	// DefaultMaxPending is how many samples may wait for the writing
	// goroutine; batches beyond it are dropped and counted.
	DefaultMaxPending = 1 << 18
	// DefaultStopTimeout is how long Stop waits for the destination to
	// take what is left.
	DefaultStopTimeout = 10 * time.Second
)

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
	// Secrets are hidden in what is written (before compression).
	Secrets *secrets.Store
	// Logf reports the first write error; nil discards it.
	Logf func(format string, args ...any)
	// MaxPending bounds the samples waiting to be written; 0 means
	// DefaultMaxPending.
	MaxPending int
	// StopTimeout bounds Stop's wait; 0 means DefaultStopTimeout.
	StopTimeout time.Duration
}

// Writer queues batches and writes them in the background. It never holds
// more than MaxPending samples: when the destination cannot keep up, later
// batches are dropped. After the first write error later samples are not
// written. Either way Stop returns an error that counts the samples lost.
type Writer struct {
	cfg Config
	enc Encoder

	mu       sync.Mutex
	pending  [][]metrics.Sample
	queued   int   // samples in pending
	dropped  int64 // samples refused because pending was full
	stopped  bool
	stopOnce sync.Once
	stopErr  error

	// taken is the number of samples the goroutine has taken from pending
	// and not yet finished with; Stop reads it when it gives up waiting.
	taken atomic.Int64

	// Owned by the writing goroutine (and by Stop once it has ended).
	spare [][]metrics.Sample
	plain *secrets.Writer // what hides secrets in dst's bytes
	gz    *gzip.Writer
	file  *os.File
	err   error
	lost  int64 // samples not written because of err
	dst   *watchedWriter
	// unconfirmed counts the samples encoded since the last write to
	// the destination: a failing Flush certainly lost them.
	unconfirmed int64
	stop        chan struct{}
	done        chan struct{}
}

// New returns a Writer that has not opened anything yet.
func New(cfg Config, enc Encoder) *Writer {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	return &Writer{cfg: cfg, enc: enc}
}

// Start opens the destination, lets the encoder begin it and starts the
// writing goroutine. Its error quotes no credential (output.Redact): a
// mistyped -o json=https://user:token@host/… must not print the token.
func (w *Writer) Start() error { return output.RedactError(w.start()) }

func (w *Writer) start() error {
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
	// Secrets are hidden before compression; standard output already
	// hides them, and Writer gives back the same writer then.
	w.plain = w.cfg.Secrets.Writer(dst)
	w.dst = &watchedWriter{w: w.plain}
	if err := w.enc.Begin(w.dst); err != nil {
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
// short lock; the batch must not change until it has been written. A batch
// that would take the queue past MaxPending samples, or that comes after
// Stop, is dropped and counted.
func (w *Writer) Add(batch []metrics.Sample) {
	if len(batch) == 0 {
		return
	}
	w.mu.Lock()
	switch {
	case w.stopped:
	case w.queued+len(batch) > w.cfg.MaxPending:
		w.dropped += int64(len(batch))
	default:
		w.pending = append(w.pending, batch)
		w.queued += len(batch)
	}
	w.mu.Unlock()
}

// run writes on every tick; at stop it writes what is left and closes the
// destination.
func (w *Writer) run() {
	defer close(w.done)
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.flush()
		case <-w.stop:
			w.flush()
			w.close()
			return
		}
	}
}

// flush encodes the queued batches and writes them out.
func (w *Writer) flush() {
	w.mu.Lock()
	batches := w.pending
	w.taken.Store(int64(w.queued))
	w.pending = w.spare[:0]
	w.queued = 0
	w.mu.Unlock()

	for i, batch := range batches {
		if w.err == nil {
			w.dst.wrote = false
			if err := w.enc.Encode(batch); err != nil {
				w.fail(err)
			}
			if w.dst.wrote {
				// Encoders write all they hold when they write, so
				// the batches before this one are out; this one may
				// be only in part.
				w.unconfirmed = 0
			} else {
				w.unconfirmed += int64(len(batch))
			}
		}
		if w.err != nil {
			w.lost += int64(len(batch))
		}
		batches[i] = nil
	}
	w.spare = batches
	if w.err == nil {
		err := w.enc.Flush()
		if err == nil {
			err = w.plain.Flush()
		}
		if err == nil && w.gz != nil {
			// Push the compressed lines through to the file too: a
			// killed process leaves a stream readable up to here.
			err = w.gz.Flush()
		}
		if err != nil {
			w.fail(err)
			w.lost += w.unconfirmed
		}
		w.unconfirmed = 0
	}
	w.taken.Store(0)
}

// close finishes the gzip stream and closes the file.
func (w *Writer) close() {
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

// fail records the first write error and logs it once.
func (w *Writer) fail(err error) {
	w.err = fmt.Errorf("%s: writing %s: %w", w.cfg.Prefix, w.cfg.Description, err)
	w.cfg.Logf("%s; no more samples will be written", output.Redact(w.err.Error()))
}

// Stop writes what is queued, then closes the file. It waits at most
// StopTimeout for a slow destination. The error it returns counts every
// sample that was not written: dropped because the queue was full, left
// after a write error, or still queued when the wait ended. Calling it
// again returns the first call's result.
func (w *Writer) Stop() error {
	w.stopOnce.Do(func() {
		w.shutdown()
		w.stopErr = output.RedactError(w.stopErr)
	})
	return w.stopErr
}

func (w *Writer) shutdown() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	if w.stop == nil { // never started
		return
	}
	close(w.stop)
	timer := time.NewTimer(w.cfg.StopTimeout)
	defer timer.Stop()
	var err error
	var lostWhat string
	select {
	case <-w.done:
		err = w.err
		lostWhat = fmt.Sprintf("at least %d samples were not written", w.lost)
	case <-timer.C:
		// The goroutine is stuck in a write; leave it and count what
		// it still holds, some of which it may have written.
		w.mu.Lock()
		held := w.taken.Load() + int64(w.queued)
		w.mu.Unlock()
		err = fmt.Errorf("%s: %s took no more data for %s", w.cfg.Prefix, w.cfg.Description, w.cfg.StopTimeout)
		lostWhat = fmt.Sprintf("up to %d samples were not written", held)
	}
	w.mu.Lock()
	dropped := w.dropped
	w.mu.Unlock()
	switch {
	case err != nil && dropped > 0:
		w.stopErr = fmt.Errorf("%w; %s and %d more were dropped because it did not keep up", err, lostWhat, dropped)
	case err != nil:
		w.stopErr = fmt.Errorf("%w; %s", err, lostWhat)
	case dropped > 0:
		w.stopErr = fmt.Errorf("%s: %d samples were dropped because %s did not keep up (more than %d samples waiting)",
			w.cfg.Prefix, dropped, w.cfg.Description, w.cfg.MaxPending)
	}
}

// watchedWriter notes whether a write to the destination succeeded.
type watchedWriter struct {
	w     io.Writer
	wrote bool
}

func (d *watchedWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if err == nil && n > 0 {
		d.wrote = true
	}
	return n, err
}
