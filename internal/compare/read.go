package compare

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/output/result"
)

// Run is what compare reads of one run: the latency distributions of its
// series, interval by interval.
type Run struct {
	// File is the file's name as given; Kind is "hdrlog" or "result".
	File, Kind string
	// Starts are the intervals' start times in order; an interval's index
	// in it is its place in the run.
	Starts []time.Time
	// End is the end of the last interval.
	End    time.Time
	Series []*Series
	// Negative counts negative values (result files keep their
	// magnitudes apart), which are not compared; Dropped the values past
	// the trend histograms' range (over 11 days).
	Negative, Dropped int64
	// Warnings describe the lines of an hdrlog that were skipped.
	Warnings []string
	// untimed are the metrics whose values are not times (a result file's
	// custom trends); an hdrlog holds only times.
	untimed map[string]bool
}

// Series is one metric's samples of one scenario and request name, with
// their histogram per interval.
type Series struct {
	SeriesKey
	// Intervals maps an interval's start (Unix milliseconds) to the
	// series' histogram of it, in metrics.TrendUnits.
	Intervals map[int64]*hdrhistogram.PackedHistogram
}

// SeriesKey is what tells series apart: an hdrlog line's tag (its outcome
// merged), or the scenario and name tags of a result file's series.
type SeriesKey struct {
	Metric   string
	Scenario string
	// Name is the requests' name tag, "" for other metrics; Folded marks
	// an hdrlog's series of the names past its cap.
	Name   string
	Folded bool
}

// ReadFile reads a run from an HdrHistogram interval log (-o hdrlog=FILE)
// or a result file (-o result=FILE), telling them apart by their first
// byte: a result file is JSON Lines. Only trends are read. through, if
// not nil, wraps the file's reader (a command passes one that a signal
// interrupts).
func ReadFile(name string, through func(io.Reader) io.Reader) (*Run, error) {
	f, err := result.OpenRegular(name)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	defer f.Close()
	var r io.Reader = f
	if through != nil {
		r = through(f)
	}
	return Read(r, name)
}

// Read reads a run as ReadFile does; name is used in messages.
func Read(r io.Reader, name string) (*Run, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	run := &Run{File: name}
	var err error
	if first := bytes.TrimLeft(head, " \t\r\n"); len(first) > 0 && first[0] == '{' {
		run.Kind = "result"
		err = run.readResult(br)
	} else {
		run.Kind = "hdrlog"
		err = run.readHdrlog(br)
	}
	if err != nil {
		return nil, err
	}
	if len(run.Starts) == 0 {
		return nil, fmt.Errorf("%s holds no interval of a trend metric to compare", name)
	}
	return run, nil
}

// series returns the run's series of key, adding it.
func (run *Run) series(key SeriesKey, index map[SeriesKey]*Series) *Series {
	s := index[key]
	if s == nil {
		s = &Series{SeriesKey: key, Intervals: map[int64]*hdrhistogram.PackedHistogram{}}
		index[key] = s
		run.Series = append(run.Series, s)
	}
	return s
}

// interval notes an interval [start, end) of the run.
func (run *Run) interval(start, end time.Time, seen map[int64]bool) {
	if !seen[start.UnixMilli()] {
		seen[start.UnixMilli()] = true
		run.Starts = append(run.Starts, start)
	}
	if end.After(run.End) {
		run.End = end
	}
}

func (run *Run) readHdrlog(r io.Reader) error {
	lr := hdrlog.NewLogReader(r, run.File)
	index := map[SeriesKey]*Series{}
	seen := map[int64]bool{}
	for {
		iv, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", run.File, err)
		}
		tag := hdrlog.ParseTag(iv.Tag)
		run.interval(iv.Start, iv.End, seen)
		s := run.series(SeriesKey{Metric: tag.Metric, Scenario: tag.Scenario, Name: tag.Name, Folded: tag.Folded}, index)
		p := s.Intervals[iv.Start.UnixMilli()]
		if p == nil {
			p = metrics.NewPackedTrendHistogram()
			s.Intervals[iv.Start.UnixMilli()] = p
		}
		// The log's microseconds are the trend histograms' units.
		run.Dropped += p.Merge(iv.Hist)
	}
	run.Warnings = lr.Warnings()
	if len(run.Starts) == 0 {
		return lr.NoIntervals()
	}
	sortStarts(run)
	return nil
}

func (run *Run) readResult(r io.Reader) error {
	index := map[SeriesKey]*Series{}
	seen := map[int64]bool{}
	_, err := result.Scan(r, run.File, func(d *result.Delta) {
		if d.Series.Type != metrics.Trend || d.N == 0 {
			return
		}
		if d.Series.Metric.Contains != metrics.Time.String() {
			if run.untimed == nil {
				run.untimed = map[string]bool{}
			}
			run.untimed[d.Series.Metric.Name] = true
		}
		run.interval(d.Start, d.End, seen)
		if d.Neg != nil {
			run.Negative += d.Neg.TotalCount()
		}
		if d.Pos == nil {
			return
		}
		tags := d.Series.Tags
		key := SeriesKey{Metric: d.Series.Metric.Name}
		key.Scenario, _ = tags.Get("scenario")
		if hdrlog.PerName(key.Metric) {
			key.Name, _ = tags.Get("name")
		}
		s := run.series(key, index)
		p := s.Intervals[d.Start.UnixMilli()]
		if p == nil {
			p = metrics.NewPackedTrendHistogram()
			s.Intervals[d.Start.UnixMilli()] = p
		}
		run.Dropped += p.Merge(d.Pos)
	})
	if err != nil {
		return err
	}
	sortStarts(run)
	return nil
}

func sortStarts(run *Run) {
	slices.SortFunc(run.Starts, func(a, b time.Time) int { return a.Compare(b) })
}
