// Package csv is the -o csv output: every sample as a CSV row, in k6's
// layout, so tools that read k6's CSV results read metronome's.
//
//	-o csv=results.csv       a file (results.csv.gz: gzip-compressed)
//	-o csv=-                 standard output
//	-o csv=fileName=r.csv,saveInterval=5s,timeFormat=rfc3339
//
// Without an argument the file is K6_CSV_FILENAME, default file.csv. The
// header is
//
//	metric_name,timestamp,metric_value,<system tags>,extra_tags,metadata
//
// where the system tag columns are the enabled indexable system tags in
// alphabetical order (vu and iter are metadata, never columns).
// metric_value has six decimals; extra_tags and metadata hold the other
// tags and the metadata as k=v pairs joined by '&'. The timestamp format is
// K6_CSV_TIME_FORMAT: unix (seconds, the default), unix_milli, unix_micro,
// unix_nano, rfc3339 or rfc3339_nano. Rows are written every
// K6_CSV_SAVE_INTERVAL (default 1s) and when the run ends.
package csv

import (
	"bufio"
	"compress/gzip"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

func init() { output.Register("csv", New) }

// Defaults of the settings.
const (
	DefaultFileName     = "file.csv"
	DefaultSaveInterval = time.Second
)

// Time formats of the timestamp column.
const (
	Unix        = "unix"
	UnixMilli   = "unix_milli"
	UnixMicro   = "unix_micro"
	UnixNano    = "unix_nano"
	RFC3339     = "rfc3339"
	RFC3339Nano = "rfc3339_nano"
)

var timeFormats = []string{Unix, UnixMilli, UnixMicro, UnixNano, RFC3339, RFC3339Nano}

// maxTagCache bounds the per-tag-set column cache.
const maxTagCache = 8192

// config is the output's settings after defaults, environment and -o
// argument were applied, in that order.
type config struct {
	fileName     string
	saveInterval time.Duration
	timeFormat   string
}

func parseConfig(arg string, env map[string]string) (config, error) {
	c := config{fileName: DefaultFileName, saveInterval: DefaultSaveInterval, timeFormat: Unix}
	set := func(key, value, origin string) error {
		switch key {
		case "fileName":
			c.fileName = value
		case "saveInterval":
			d, err := duration.Parse(value)
			if err != nil || d <= 0 {
				return fmt.Errorf("csv output: %s %q is not a positive duration such as 1s", origin, value)
			}
			c.saveInterval = d
		case "timeFormat":
			if !validTimeFormat(value) {
				return fmt.Errorf("csv output: %s %q is not one of %s", origin, value, strings.Join(timeFormats, ", "))
			}
			c.timeFormat = value
		default:
			return fmt.Errorf("csv output: unknown setting %q in %s; use fileName, saveInterval or timeFormat", key, origin)
		}
		return nil
	}
	for _, e := range [][2]string{
		{"fileName", "K6_CSV_FILENAME"}, {"saveInterval", "K6_CSV_SAVE_INTERVAL"}, {"timeFormat", "K6_CSV_TIME_FORMAT"},
	} {
		if v := env[e[1]]; v != "" {
			if err := set(e[0], v, e[1]); err != nil {
				return c, err
			}
		}
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return c, nil
	}
	if !strings.Contains(arg, "=") {
		c.fileName = arg
		return c, nil
	}
	for _, pair := range strings.Split(arg, ",") {
		k, v, _ := strings.Cut(pair, "=")
		if err := set(strings.TrimSpace(k), strings.TrimSpace(v), "-o csv="+arg); err != nil {
			return c, err
		}
	}
	return c, nil
}

func validTimeFormat(f string) bool {
	for _, t := range timeFormats {
		if f == t {
			return true
		}
	}
	return false
}

// nonIndexable are system tags that are sample metadata, not tags.
var nonIndexable = map[string]bool{"vu": true, "iter": true}

// Output writes samples as CSV rows.
type Output struct {
	params  output.Params
	cfg     config
	columns []string       // system tag columns, sorted
	column  map[string]int // tag name → index in columns

	mu       sync.Mutex
	pending  [][]metrics.Sample
	stopped  bool
	stopOnce sync.Once

	// Owned by the writing goroutine (and by Stop once it has ended).
	spare  [][]metrics.Sample
	rec    []string
	tags   map[*metrics.TagSet]*tagColumns
	keys   []string
	sb     strings.Builder
	lastTS int64
	lastTV string
	bw     *bufio.Writer
	cw     *stdcsv.Writer
	gz     *gzip.Writer
	file   *os.File
	err    error
	stop   chan struct{}
	done   chan struct{}
}

// tagColumns is a tag set spread over the columns: the system tag values
// and the extra_tags field.
type tagColumns struct {
	values []string
	extra  string
}

// New builds the output from -o csv=ARG and the K6_CSV_* settings.
func New(p output.Params) (output.Output, error) {
	cfg, err := parseConfig(p.Arg, p.Env)
	if err != nil {
		return nil, err
	}
	if p.Logf == nil {
		p.Logf = func(string, ...any) {}
	}
	o := &Output{params: p, cfg: cfg, column: map[string]int{}, tags: map[*metrics.TagSet]*tagColumns{}}
	seen := map[string]bool{}
	for _, t := range p.SystemTags {
		if !nonIndexable[t] && !seen[t] {
			seen[t] = true
			o.columns = append(o.columns, t)
		}
	}
	sort.Strings(o.columns)
	for i, c := range o.columns {
		o.column[c] = i
	}
	o.rec = make([]string, 3+len(o.columns)+2)
	return o, nil
}

// Description names the output and its destination.
func (o *Output) Description() string {
	if o.cfg.fileName == "-" {
		return "csv (stdout)"
	}
	return "csv (" + o.cfg.fileName + ")"
}

// Header returns the header row's fields.
func (o *Output) Header() []string {
	h := append([]string{"metric_name", "timestamp", "metric_value"}, o.columns...)
	return append(h, "extra_tags", "metadata")
}

// Start opens the destination, writes the header and starts the writer.
func (o *Output) Start() error {
	var w io.Writer
	if o.cfg.fileName == "-" {
		w = o.params.Stdout
		if w == nil {
			w = os.Stdout
		}
	} else {
		f, err := os.Create(o.cfg.fileName)
		if err != nil {
			if u := errors.Unwrap(err); u != nil {
				err = u
			}
			return fmt.Errorf("csv output: cannot create %s: %w", o.cfg.fileName, err)
		}
		o.file = f
		w = f
		if strings.HasSuffix(o.cfg.fileName, ".gz") {
			o.gz = gzip.NewWriter(f)
			w = o.gz
		}
	}
	o.bw = bufio.NewWriterSize(w, 64<<10)
	o.cw = stdcsv.NewWriter(o.bw)
	if err := o.cw.Write(o.Header()); err != nil {
		return fmt.Errorf("csv output: writing the header of %s: %w", o.cfg.fileName, err)
	}
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
	t := time.NewTicker(o.cfg.saveInterval)
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

// flush writes the queued batches as rows.
func (o *Output) flush() {
	o.mu.Lock()
	batches := o.pending
	o.pending = o.spare[:0]
	o.mu.Unlock()

	for i, batch := range batches {
		for j := range batch {
			if o.err != nil {
				break
			}
			if batch[j].Metric == nil {
				continue
			}
			if err := o.cw.Write(o.row(&batch[j])); err != nil {
				o.fail(err)
			}
		}
		batches[i] = nil
	}
	o.spare = batches
	if o.err == nil {
		o.cw.Flush()
		if err := o.cw.Error(); err != nil {
			o.fail(err)
		} else if err := o.bw.Flush(); err != nil {
			o.fail(err)
		}
	}
}

// row fills the reused record with s's fields.
func (o *Output) row(s *metrics.Sample) []string {
	r := o.rec
	r[0] = s.Metric.Name
	r[1] = o.timestamp(s.Time)
	r[2] = strconv.FormatFloat(s.Value, 'f', 6, 64)
	tc := o.tagColumns(s.Tags)
	copy(r[3:], tc.values)
	n := 3 + len(o.columns)
	r[n] = tc.extra
	r[n+1] = o.joinMap(s.Metadata)
	return r
}

// timestamp formats t in the configured format. Consecutive samples in the
// same second share one string in the default unix format.
func (o *Output) timestamp(t time.Time) string {
	switch o.cfg.timeFormat {
	case UnixMilli:
		return strconv.FormatInt(t.UnixMilli(), 10)
	case UnixMicro:
		return strconv.FormatInt(t.UnixMicro(), 10)
	case UnixNano:
		return strconv.FormatInt(t.UnixNano(), 10)
	case RFC3339:
		return t.Format(time.RFC3339)
	case RFC3339Nano:
		return t.Format(time.RFC3339Nano)
	}
	sec := t.Unix()
	if sec != o.lastTS || o.lastTV == "" {
		o.lastTS, o.lastTV = sec, strconv.FormatInt(sec, 10)
	}
	return o.lastTV
}

// tagColumns spreads a tag set over the columns, cached per interned set.
func (o *Output) tagColumns(t *metrics.TagSet) *tagColumns {
	if t == nil {
		t = metrics.EmptyTags
	}
	if tc, ok := o.tags[t]; ok {
		return tc
	}
	if len(o.tags) >= maxTagCache {
		clear(o.tags)
	}
	tc := &tagColumns{values: make([]string, len(o.columns))}
	var extra strings.Builder
	t.Range(func(k, v string) bool {
		if i, ok := o.column[k]; ok {
			tc.values[i] = v
			return true
		}
		if extra.Len() > 0 {
			extra.WriteByte('&')
		}
		extra.WriteString(k)
		extra.WriteByte('=')
		extra.WriteString(v)
		return true
	})
	tc.extra = extra.String()
	o.tags[t] = tc
	return tc
}

// joinMap writes m as k=v pairs joined by '&', keys sorted.
func (o *Output) joinMap(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	o.keys = o.keys[:0]
	for k := range m {
		o.keys = append(o.keys, k)
	}
	sort.Strings(o.keys)
	o.sb.Reset()
	for i, k := range o.keys {
		if i > 0 {
			o.sb.WriteByte('&')
		}
		o.sb.WriteString(k)
		o.sb.WriteByte('=')
		o.sb.WriteString(m[k])
	}
	return o.sb.String()
}

// fail records the first write error; later samples are dropped.
func (o *Output) fail(err error) {
	o.err = fmt.Errorf("csv output: writing %s: %w", o.Description(), err)
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
			o.err = fmt.Errorf("csv output: compressing %s: %w", o.cfg.fileName, err)
		}
	}
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.err == nil {
			o.err = fmt.Errorf("csv output: closing %s: %w", o.cfg.fileName, err)
		}
	}
}
