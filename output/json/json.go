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
	"io"
	"strings"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/internal/file"
)

// FlushInterval is how often buffered lines are written out.
const FlushInterval = 200 * time.Millisecond

// writeSize is how many encoded bytes are gathered before one write.
const writeSize = 64 << 10

func init() { output.Register("json", New) }

// Output writes samples as JSON lines.
type Output struct {
	name string // file name, "" for standard output
	file *file.Writer
}

// New builds the output from -o json=ARG.
func New(p output.Params) (output.Output, error) {
	name := strings.TrimSpace(p.Arg)
	if name == "-" {
		name = ""
	}
	o := &Output{name: name}
	dest := name
	if dest == "" {
		dest = "-"
	}
	o.file = file.New(file.Config{
		Name:        dest,
		Stdout:      p.Stdout,
		Interval:    FlushInterval,
		Prefix:      "json output",
		Description: o.Description(),
		Logf:        p.Logf,
		Secrets:     p.Secrets,
	}, &lines{enc: newEncoder(p.Thresholds)})
	return o, nil
}

// Description names the output and its destination.
func (o *Output) Description() string {
	if o.name == "" {
		return "json (stdout)"
	}
	return "json (" + output.Redact(o.name) + ")"
}

// Start opens the destination and starts the writer.
func (o *Output) Start() error { return o.file.Start() }

// AddSamples queues a batch; the writer encodes it on its next tick. It
// only appends the slice under a short lock.
func (o *Output) AddSamples(batch []metrics.Sample) { o.file.Add(batch) }

// Stop writes what is queued, then closes the file. Calling it again
// returns the first call's result.
func (o *Output) Stop() error { return o.file.Stop() }

// lines is the file encoder: samples as JSON lines, gathered into writes
// of about writeSize bytes.
type lines struct {
	enc *encoder
	buf []byte
	w   io.Writer
}

func (l *lines) Begin(w io.Writer) error {
	l.w = w
	return nil
}

func (l *lines) Encode(batch []metrics.Sample) error {
	for i := range batch {
		if batch[i].Metric == nil {
			continue
		}
		l.buf = l.enc.appendSample(l.buf, &batch[i])
		if len(l.buf) >= writeSize {
			if err := l.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lines) Flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}
