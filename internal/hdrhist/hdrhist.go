// Package hdrhist is an HdrHistogram for the code that keeps many at
// once (the outputs' one per request name, metric and open interval, the
// summary's trend sinks): it starts sparse and turns dense once busy. A dense histogram of metronome's geometry
// (1 µs to one day, 3 significant digits) holds 230 KB whatever it
// records; a sparse one grows with the buckets its values fill, a few KB
// for a quiet endpoint, but records more slowly (a binary search per
// value). Switching at Dense values keeps both the memory of many quiet
// series and the recording cost of the busy ones small.
package hdrhist

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Dense is how many values a Hist takes before it moves to dense storage.
const Dense = 2048

// Hist is one histogram. The zero value is empty; record into it through
// a Pool.
type Hist struct {
	sparse *hdrhistogram.PackedHistogram
	dense  *hdrhistogram.Histogram
}

// Pool makes and reuses the storage of Hists of one geometry. A pool from
// NewPool is not safe for concurrent use; one from NewSharedPool is.
type Pool struct {
	lowest, highest int64
	digits          int
	// shared pools keep no storage for reuse, so that nothing in them
	// changes after they are made.
	shared bool
	sparse []*hdrhistogram.PackedHistogram
	dense  []*hdrhistogram.Histogram
}

// NewPool returns a pool of histograms from lowest to highest with digits
// significant digits.
func NewPool(lowest, highest int64, digits int) *Pool {
	return &Pool{lowest: lowest, highest: highest, digits: digits}
}

// NewSharedPool returns a pool of histograms from lowest to highest with
// digits significant digits that keeps no storage for reuse (Release
// drops it), so that any number of goroutines may use it at once: for
// long-lived Hists held by many owners, such as the summary's trend sinks.
func NewSharedPool(lowest, highest int64, digits int) *Pool {
	return &Pool{lowest: lowest, highest: highest, digits: digits, shared: true}
}

// Record adds v to h. Once h's storage is in use it allocates nothing.
func (p *Pool) Record(h *Hist, v int64) {
	if h.dense != nil {
		_ = h.dense.RecordValue(v)
		return
	}
	p.recordSparse(h, v)
}

// recordSparse is Record's path for a Hist not yet dense, kept apart so
// that Record's dense path inlines into its callers.
func (p *Pool) recordSparse(h *Hist, v int64) {
	if h.sparse == nil {
		h.sparse = p.newSparse()
	}
	_ = h.sparse.RecordValue(v)
	p.densify(h)
}

// Merge adds the values of src, a Hist of the pool's geometry, to h and
// returns how many did not fit. h turns dense when it reaches Dense
// values, as if they had been recorded one by one.
func (p *Pool) Merge(h, src *Hist) int64 {
	switch {
	case src.dense != nil:
		if h.dense == nil {
			h.dense = p.newDense()
			if h.sparse != nil {
				h.sparse.MergeInto(h.dense)
				p.putSparse(h.sparse)
				h.sparse = nil
			}
		}
		return h.dense.Merge(src.dense)
	case src.sparse != nil:
		return p.MergePacked(h, src.sparse)
	}
	return 0
}

// Clone returns an independent copy of h, dense or sparse as h is.
func (p *Pool) Clone(h *Hist) Hist {
	var c Hist
	if h.dense != nil {
		c.dense = p.newDense()
		c.dense.Merge(h.dense)
	}
	if h.sparse != nil {
		c.sparse = p.newSparse()
		c.sparse.Merge(h.sparse)
	}
	return c
}

// MergePacked adds the values of src, a sparse histogram (as
// hdrlog.LogReader decodes a log's), to h and returns how many did not
// fit.
func (p *Pool) MergePacked(h *Hist, src *hdrhistogram.PackedHistogram) int64 {
	if h.dense == nil && h.sparse == nil && src.TotalCount() < Dense {
		h.sparse = p.newSparse()
	}
	if h.sparse != nil {
		dropped := h.sparse.Merge(src)
		p.densify(h)
		return dropped
	}
	if h.dense == nil {
		h.dense = p.newDense()
	}
	return src.MergeInto(h.dense)
}

// densify moves h to dense storage once it holds Dense values.
func (p *Pool) densify(h *Hist) {
	if h.sparse == nil || h.sparse.TotalCount() < Dense {
		return
	}
	h.dense = p.newDense()
	h.sparse.MergeInto(h.dense)
	p.putSparse(h.sparse)
	h.sparse = nil
}

func (p *Pool) newSparse() *hdrhistogram.PackedHistogram {
	if n := len(p.sparse); n > 0 {
		s := p.sparse[n-1]
		p.sparse = p.sparse[:n-1]
		return s
	}
	return hdrhistogram.NewPacked(p.lowest, p.highest, p.digits)
}

func (p *Pool) newDense() *hdrhistogram.Histogram {
	if n := len(p.dense); n > 0 {
		d := p.dense[n-1]
		p.dense = p.dense[:n-1]
		return d
	}
	return hdrhistogram.New(p.lowest, p.highest, p.digits)
}

func (p *Pool) putSparse(s *hdrhistogram.PackedHistogram) {
	if p.shared {
		return
	}
	s.Reset()
	p.sparse = append(p.sparse, s)
}

// Release empties h and keeps its storage for the next Hist (a shared
// pool lets it go).
func (p *Pool) Release(h *Hist) {
	if h.dense != nil && !p.shared {
		h.dense.Reset()
		p.dense = append(p.dense, h.dense)
	}
	if h.sparse != nil {
		p.putSparse(h.sparse)
	}
	*h = Hist{}
}

// Reset empties h and keeps its storage, dense or sparse, for its next
// values.
func (h *Hist) Reset() {
	if h.dense != nil {
		h.dense.Reset()
	}
	if h.sparse != nil {
		h.sparse.Reset()
	}
}

// TotalCount is the number of values recorded.
func (h *Hist) TotalCount() int64 {
	switch {
	case h.dense != nil:
		return h.dense.TotalCount()
	case h.sparse != nil:
		return h.sparse.TotalCount()
	}
	return 0
}

// ValueAtPercentile is HdrHistogram's value at percentile p (0–100).
func (h *Hist) ValueAtPercentile(p float64) int64 {
	switch {
	case h.dense != nil:
		return h.dense.ValueAtPercentile(p)
	case h.sparse != nil:
		return h.sparse.ValueAtPercentile(p)
	}
	return 0
}

// Max is the largest value recorded, as HdrHistogram reports it.
func (h *Hist) Max() int64 {
	switch {
	case h.dense != nil:
		return h.dense.Max()
	case h.sparse != nil:
		return h.sparse.Max()
	}
	return 0
}

// MergeInto adds h's values to dst and returns how many did not fit.
func (h *Hist) MergeInto(dst *hdrhistogram.Histogram) int64 {
	switch {
	case h.dense != nil:
		return dst.Merge(h.dense)
	case h.sparse != nil:
		return h.sparse.MergeInto(dst)
	}
	return 0
}

// MergeIntoPacked adds h's values to dst and returns how many did not
// fit: a sparse copy of h, whatever its storage.
func (h *Hist) MergeIntoPacked(dst *hdrhistogram.PackedHistogram) int64 {
	switch {
	case h.dense != nil:
		return dst.MergeFrom(h.dense)
	case h.sparse != nil:
		return dst.Merge(h.sparse)
	}
	return 0
}
