package dashboard

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/hdrlog"
)

// maxRows bounds the intervals of a report built from logs: longer runs
// get longer intervals, so the page stays small.
const maxRows = 360

// logInterval is one interval histogram read from a log.
type logInterval struct {
	series     hdrlog.Series
	start, end time.Time
	h          *hdrhistogram.PackedHistogram
}

// LogReader collects the interval histograms of HdrHistogram logs written
// by -o hdrlog=FILE (one instance's, or several instances' of the same
// test: intervals that overlap in time are merged, exactly). It keeps each
// interval in the sparse form hdrlog.LogReader decodes, which grows with
// the buckets the log fills.
type LogReader struct {
	intervals []logInterval
	warnings  []string
}

// Add reads one log; name is used in errors and warnings. Lines that are
// not interval histograms are skipped and described by Warnings.
func (lr *LogReader) Add(r io.Reader, name string) error {
	rd := hdrlog.NewLogReader(r, name)
	n := 0
	for {
		h, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		n++
		lr.intervals = append(lr.intervals, logInterval{series: hdrlog.ParseTag(h.Tag), start: h.Start, end: h.End, h: h.Hist})
	}
	lr.warnings = append(lr.warnings, rd.Warnings()...)
	if n == 0 {
		return rd.NoIntervals()
	}
	return nil
}

// Warnings describe the lines skipped in the logs added so far and, once
// Timeline has run, the values its histograms could not hold.
func (lr *LogReader) Warnings() []string { return lr.warnings }

// AddInterval adds one interval histogram of a series, in microseconds
// (from a result file, say); h is kept.
func (lr *LogReader) AddInterval(series hdrlog.Series, start, end time.Time, h *hdrhistogram.PackedHistogram) {
	lr.intervals = append(lr.intervals, logInterval{series: series, start: start, end: end, h: h})
}

// Timeline builds the timeline of everything read, with intervals of at
// least period (0: the logs' own interval), lengthened so that there are
// at most maxRows of them.
func (lr *LogReader) Timeline(period time.Duration) (*Timeline, error) {
	if len(lr.intervals) == 0 {
		return nil, fmt.Errorf("no interval histograms were read")
	}
	start, end := lr.intervals[0].start, lr.intervals[0].end
	var step time.Duration
	for _, iv := range lr.intervals {
		if iv.start.Before(start) {
			start = iv.start
		}
		if iv.end.After(end) {
			end = iv.end
		}
		step = max(step, iv.end.Sub(iv.start))
	}
	if period <= 0 {
		period = max(step, time.Second)
	}
	if span := end.Sub(start); span/period > maxRows {
		period = time.Duration(math.Ceil(float64(span)/float64(maxRows)/float64(time.Second))) * time.Second
	}
	type key struct {
		sec    string
		metric string
		row    int
	}
	sections := map[string]*Section{"": newSection("")}
	order := []*Section{sections[""]}
	hists := map[key]*hdrhistogram.Histogram{}
	dropped := map[string]int64{}
	for _, iv := range lr.intervals {
		names := []string{""}
		if iv.series.Scenario != "" {
			names = append(names, iv.series.Scenario)
		}
		row := int(iv.start.Sub(start) / period)
		for _, name := range names {
			sec := sections[name]
			if sec == nil {
				sec = newSection(name)
				sections[name] = sec
				order = append(order, sec)
			}
			sec.row(row)
			var lost int64 // of this interval, by the spectrum
			switch iv.series.Metric {
			case metrics.HTTPReqDurationName:
				lost = iv.h.MergeInto(sec.SpectrumRaw)
				sec.Rows[row].Requests += float64(iv.h.TotalCount())
			case metrics.CorrectedLatencyName:
				lost = iv.h.MergeInto(sec.SpectrumCorrected)
				if iv.series.Outcome == "dropped" {
					sec.Rows[row].Dropped += float64(iv.h.TotalCount())
				}
			case metrics.ScheduleLagName:
				sec.HasLag = true
			case metrics.IterationDurationName:
				sec.Rows[row].Iterations += float64(iv.h.TotalCount())
			default:
				continue
			}
			k := key{name, iv.series.Metric, row}
			if hists[k] == nil {
				hists[k] = newHist()
			}
			// A value out of range is lost to the row and the spectrum
			// alike; a count that overflows a total, to one of them.
			// Counted for the whole test only.
			if d := iv.h.MergeInto(hists[k]); name == "" {
				dropped[iv.series.Metric] += max(d, lost)
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(dropped)) {
		if dropped[m] > 0 {
			lr.warnings = append(lr.warnings, fmt.Sprintf("%d values of %s did not fit the report's histograms (1 µs to one day, at most 2^63 values) and were left out of its charts", dropped[m], m))
		}
	}
	for k, h := range hists {
		r := &sections[k.sec].Rows[k.row]
		switch k.metric {
		case metrics.HTTPReqDurationName:
			r.Raw = statsOf(h)
		case metrics.CorrectedLatencyName:
			r.Corrected = statsOf(h)
		case metrics.ScheduleLagName:
			r.Lag = statsOf(h)
		}
	}
	// In an open-model scenario (one with schedule_lag) every intended
	// arrival either completed, with one schedule_lag value, or was
	// dropped, with one corrected_latency value tagged outcome=dropped
	// (logs written before that tag was logged count no drops); the log
	// places both by their end rather than the intended start.
	for _, sec := range order {
		if !sec.HasLag {
			continue
		}
		sec.HasIntended = true
		for i := range sec.Rows {
			sec.Rows[i].Intended = float64(sec.Rows[i].Lag.Count) + sec.Rows[i].Dropped
			sec.Rows[i].Completed = sec.Rows[i].Iterations
		}
	}
	total := sections[""]
	if total.HasLag && len(order) > 1 {
		// The whole test's intended arrivals are those of the open-model
		// scenarios only.
		for i := range total.Rows {
			total.Rows[i].Intended, total.Rows[i].Completed = 0, 0
			for _, sec := range order[1:] {
				if sec.HasLag && i < len(sec.Rows) {
					total.Rows[i].Intended += sec.Rows[i].Intended
					total.Rows[i].Completed += sec.Rows[i].Completed
				}
			}
		}
	}
	tl := &Timeline{Start: start, Period: period, Sections: order, Done: true}
	sortSections(tl.Sections)
	slices.SortStableFunc(lr.intervals, func(a, b logInterval) int { return a.start.Compare(b.start) })
	tl.Endpoints, tl.EndpointsFolded = logEndpoints(lr.intervals, start, period)
	return tl, nil
}
