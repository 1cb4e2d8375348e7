// Package replay is an example extension executor built on metronome's
// executor kit: replay-arrivals starts iterations at the intended start
// times listed in a file, for example the arrival times of a production
// log, and measures corrected_latency from them. All it defines is the
// arrival process (Offsets, a Timetable), its options and its banner; the
// arrival loop, queue-or-drop, the VU budget and the accounting are the
// kit's ArrivalConfig.
//
// The file holds one offset from the scenario start per line: a Go
// duration with its unit ("0.5ms", "12ms", "1m30s") or a bare number of
// seconds ("0.012"). Blank lines and lines starting with # are skipped.
// The lines need not be in order (merged logs seldom are); they are sorted.
package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// Name is the executor name scenarios use.
const Name = "replay-arrivals"

func init() { executor.Register(executor.Type{Name: Name, Parse: parse}) }

// Offsets are intended starts, in ascending order: a Timetable.
type Offsets []time.Duration

// Offset returns the intended start of arrival i.
func (o Offsets) Offset(i int64) (time.Duration, bool) {
	if i < 0 || i >= int64(len(o)) {
		return 0, false
	}
	return o[i], true
}

// Walk returns o itself: reading a slice needs no cursor.
func (o Offsets) Walk() schedule.Walker { return o }

// Duration is the last offset: no arrival is intended after it.
func (o Offsets) Duration() time.Duration {
	if len(o) == 0 {
		return 0
	}
	return o[len(o)-1]
}

// Count is the number of arrivals.
func (o Offsets) Count() int64 { return int64(len(o)) }

// Read reads offsets in the file format, one per line; name is the file's
// name in errors, which say "name:line: ...".
func Read(name string, r io.Reader) (Offsets, error) {
	var o Offsets
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		d, err := parseOffset(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		o = append(o, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(o) == 0 {
		return nil, fmt.Errorf("%s: has no offsets: write one per line, such as 12ms or 0.012", name)
	}
	slices.Sort(o)
	return o, nil
}

// maxSeconds keeps a number of seconds within a time.Duration.
const maxSeconds = float64(math.MaxInt64 / int64(time.Second))

// parseOffset reads one offset: a duration with a unit, or seconds.
func parseOffset(text string) (time.Duration, error) {
	if s, err := strconv.ParseFloat(text, 64); err == nil {
		if math.IsNaN(s) || s < 0 || s > maxSeconds {
			return 0, fmt.Errorf("%q is not an offset: seconds must be a number from 0 to %.0f", text, maxSeconds)
		}
		return time.Duration(math.Round(s * float64(time.Second))), nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("%q is not an offset: write a duration such as 12ms or 0.5s, or seconds such as 0.012", text)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is not an offset: it must not be negative", text)
	}
	return d, nil
}

// Config is a parsed replay-arrivals scenario.
type Config struct {
	executor.ArrivalConfig
	File    string
	Offsets Offsets
}

// options are the JSON options: the common ones plus file, the VU budget
// and the policy.
type options struct {
	executor.BaseOptions
	File            *string `json:"file"`
	PreAllocatedVUs *int64  `json:"preAllocatedVUs"`
	MaxVUs          *int64  `json:"maxVUs"`
	Policy          *string `json:"policy"`
}

// maxVUsLimit bounds the VU options.
const maxVUsLimit = 1_000_000

func parse(name string, raw json.RawMessage) (executor.Config, error) {
	var o options
	sc, err := executor.DecodeScenario(name, raw, &o)
	if err != nil {
		return nil, err
	}
	errorf := func(option, format string, args ...any) error {
		return fmt.Errorf("scenarios.%s.%s: %s", name, option, fmt.Sprintf(format, args...))
	}
	if o.File == nil || *o.File == "" {
		return nil, errorf("file", "required: a file of intended start offsets, one per line (such as 12ms or 0.012)")
	}
	pre, maxVUs := int64(1), int64(0)
	if o.PreAllocatedVUs != nil {
		pre = *o.PreAllocatedVUs
	}
	if pre < 0 || pre > maxVUsLimit {
		return nil, errorf("preAllocatedVUs", "must be between 0 and %d, got %d", maxVUsLimit, pre)
	}
	maxVUs = max(pre, 1)
	if o.MaxVUs != nil {
		maxVUs = *o.MaxVUs
		if maxVUs < max(pre, 1) || maxVUs > maxVUsLimit {
			return nil, errorf("maxVUs", "must be between %d (preAllocatedVUs, at least 1) and %d, got %d", max(pre, 1), maxVUsLimit, maxVUs)
		}
	}
	policy := executor.Queue
	if o.Policy != nil {
		switch *o.Policy {
		case "queue":
		case "drop":
			policy = executor.Drop
		default:
			return nil, errorf("policy", `must be "queue" or "drop", got %q`, *o.Policy)
		}
	}
	f, err := os.Open(*o.File)
	if err != nil {
		return nil, errorf("file", "cannot open %s: %v", *o.File, unwrapPath(err))
	}
	defer f.Close()
	offsets, err := Read(*o.File, f)
	if err != nil {
		return nil, errorf("file", "%v", err)
	}
	ac, err := executor.NewArrivalConfig(sc, offsets, int(pre), int(maxVUs), policy)
	if err != nil {
		return nil, err
	}
	return &Config{ArrivalConfig: ac, File: *o.File, Offsets: offsets}, nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Description is the banner line: "replaying 120 arrivals from
// arrivals.txt over 2s, queue (maxVUs: 1-5, gracefulStop: 30s)".
func (c *Config) Description() string {
	return c.Describe(fmt.Sprintf("replaying %d arrivals from %s over %s, %s", len(c.Offsets), c.File, c.Offsets.Duration(), c.Policy()))
}

// Segmented gives an instance of a distributed test its stripe of the
// arrivals, at their recorded times.
func (c *Config) Segmented(t *segment.Tuple) (executor.Config, error) {
	cp := *c
	cp.ArrivalConfig = c.ArrivalConfig.Segment(t)
	return &cp, nil
}
