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
	stdcsv "encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/internal/file"
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
	cfg     config
	columns []string // system tag columns, sorted
	file    *file.Writer
}

// rows is the file encoder: samples as CSV rows after a header. It caches
// each interned tag set's columns.
type rows struct {
	timeFormat string
	columns    []string       // system tag columns, sorted
	column     map[string]int // tag name → index in columns
	header     []string

	rec    []string
	tags   map[*metrics.TagSet]*tagColumns
	keys   []string
	sb     strings.Builder
	lastTS int64
	lastTV string
	bw     *bufio.Writer
	cw     *stdcsv.Writer
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
	o := &Output{cfg: cfg}
	seen := map[string]bool{}
	for _, t := range p.SystemTags {
		if !nonIndexable[t] && !seen[t] {
			seen[t] = true
			o.columns = append(o.columns, t)
		}
	}
	sort.Strings(o.columns)
	r := &rows{
		timeFormat: cfg.timeFormat,
		columns:    o.columns,
		column:     make(map[string]int, len(o.columns)),
		header:     o.Header(),
		rec:        make([]string, 3+len(o.columns)+2),
		tags:       map[*metrics.TagSet]*tagColumns{},
	}
	for i, c := range o.columns {
		r.column[c] = i
	}
	o.file = file.New(file.Config{
		Name:        cfg.fileName,
		Stdout:      p.Stdout,
		Interval:    cfg.saveInterval,
		Prefix:      "csv output",
		Description: o.Description(),
		Logf:        p.Logf,
		Secrets:     p.Secrets,
	}, r)
	return o, nil
}

// Description names the output and its destination.
func (o *Output) Description() string {
	if o.cfg.fileName == "-" {
		return "csv (stdout)"
	}
	return "csv (" + output.Redact(o.cfg.fileName) + ")"
}

// Header returns the header row's fields.
func (o *Output) Header() []string {
	h := append([]string{"metric_name", "timestamp", "metric_value"}, o.columns...)
	return append(h, "extra_tags", "metadata")
}

// Start opens the destination, writes the header and starts the writer.
func (o *Output) Start() error { return o.file.Start() }

// AddSamples queues a batch; the writer encodes it on its next tick. It
// only appends the slice under a short lock.
func (o *Output) AddSamples(batch []metrics.Sample) { o.file.Add(batch) }

// Stop writes what is queued, then closes the file. Calling it again
// returns the first call's result.
func (o *Output) Stop() error { return o.file.Stop() }

func (r *rows) Begin(w io.Writer) error {
	r.bw = bufio.NewWriterSize(w, 64<<10)
	r.cw = stdcsv.NewWriter(r.bw)
	return r.cw.Write(r.header)
}

func (r *rows) Encode(batch []metrics.Sample) error {
	for i := range batch {
		if batch[i].Metric == nil {
			continue
		}
		if err := r.cw.Write(r.row(&batch[i])); err != nil {
			return err
		}
	}
	return nil
}

func (r *rows) Flush() error {
	r.cw.Flush()
	if err := r.cw.Error(); err != nil {
		return err
	}
	return r.bw.Flush()
}

// row fills the reused record with s's fields.
func (r *rows) row(s *metrics.Sample) []string {
	rec := r.rec
	rec[0] = s.Metric.Name
	rec[1] = r.timestamp(s.Time)
	rec[2] = strconv.FormatFloat(s.Value, 'f', 6, 64)
	tc := r.tagColumns(s.Tags)
	copy(rec[3:], tc.values)
	n := 3 + len(r.columns)
	rec[n] = tc.extra
	rec[n+1] = r.joinMap(s.Metadata)
	return rec
}

// timestamp formats t in the configured format. Consecutive samples in the
// same second share one string in the default unix format.
func (r *rows) timestamp(t time.Time) string {
	switch r.timeFormat {
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
	if sec != r.lastTS || r.lastTV == "" {
		r.lastTS, r.lastTV = sec, strconv.FormatInt(sec, 10)
	}
	return r.lastTV
}

// tagColumns spreads a tag set over the columns, cached per interned set.
func (r *rows) tagColumns(t *metrics.TagSet) *tagColumns {
	if t == nil {
		t = metrics.EmptyTags
	}
	if tc, ok := r.tags[t]; ok {
		return tc
	}
	if len(r.tags) >= maxTagCache {
		clear(r.tags)
	}
	tc := &tagColumns{values: make([]string, len(r.columns))}
	var extra strings.Builder
	t.Range(func(k, v string) bool {
		if i, ok := r.column[k]; ok {
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
	r.tags[t] = tc
	return tc
}

// joinMap writes m as k=v pairs joined by '&', keys sorted.
func (r *rows) joinMap(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	r.keys = r.keys[:0]
	for k := range m {
		r.keys = append(r.keys, k)
	}
	sort.Strings(r.keys)
	r.sb.Reset()
	for i, k := range r.keys {
		if i > 0 {
			r.sb.WriteByte('&')
		}
		r.sb.WriteString(k)
		r.sb.WriteByte('=')
		r.sb.WriteString(m[k])
	}
	return r.sb.String()
}
