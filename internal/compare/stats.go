package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/metronome-load/metronome/metrics"
)

// cell is one bucket's count in one interval: i indexes the row's
// dictionary of buckets.
type cell struct {
	i int32
	n int64
}

// sample is one run's samples of one row, interval by interval (every
// interval of the run, empty ones included, so that blocks of consecutive
// intervals are blocks of time).
type sample struct {
	intervals [][]cell
	count     int64
}

// dictionary is the sorted buckets a row's two samples populate, with the
// value each stands for: the middle of the bucket, in trend units.
type dictionary struct {
	index map[int64]int32 // bucket's lowest value → position
	mids  []float64
}

// newDictionary gathers the buckets of every interval of the series of
// both runs.
func newDictionary(groups ...[]*Series) *dictionary {
	seen := map[int64]bool{}
	for _, g := range groups {
		for _, s := range g {
			for _, h := range s.Intervals {
				h.ForEachBucket(func(v, _ int64) bool {
					seen[v] = true
					return true
				})
			}
		}
	}
	lows := make([]int64, 0, len(seen))
	for v := range seen {
		lows = append(lows, v)
	}
	slices.Sort(lows)
	d := &dictionary{index: make(map[int64]int32, len(lows)), mids: make([]float64, len(lows))}
	for i, v := range lows {
		d.index[v] = int32(i)
		d.mids[i] = metrics.TrendBucketMiddle(v)
	}
	return d
}

// sampleOf merges the series of one run into one sample over d.
func sampleOf(run *Run, series []*Series, d *dictionary) *sample {
	s := &sample{intervals: make([][]cell, len(run.Starts))}
	acc := map[int32]int64{}
	for k, start := range run.Starts {
		clear(acc)
		for _, sr := range series {
			h := sr.Intervals[start.UnixMilli()]
			if h == nil {
				continue
			}
			h.ForEachBucket(func(v, n int64) bool {
				acc[d.index[v]] += n
				return true
			})
		}
		if len(acc) == 0 {
			continue
		}
		cells := make([]cell, 0, len(acc))
		for i, n := range acc {
			cells = append(cells, cell{i, n})
			s.count += n
		}
		slices.SortFunc(cells, func(a, b cell) int { return int(a.i - b.i) })
		s.intervals[k] = cells
	}
	return s
}

// populated counts the intervals that hold samples.
func (s *sample) populated() int {
	n := 0
	for _, c := range s.intervals {
		if len(c) > 0 {
			n++
		}
	}
	return n
}

// add adds interval k to counts and returns its number of samples.
func (s *sample) add(k int, counts []int64) int64 {
	var n int64
	for _, c := range s.intervals[k] {
		counts[c.i] += c.n
		n += c.n
	}
	return n
}

// all fills counts with the whole sample.
func (s *sample) all(counts []int64) int64 {
	clear(counts)
	var n int64
	for k := range s.intervals {
		n += s.add(k, counts)
	}
	return n
}

// blockLength is the length, in intervals, of the blocks the bootstrap
// draws from n intervals: about the cube root of n, the order that
// minimises the error of a moving-block bootstrap's variance (Hall,
// Horowitz and Jing, 1995), and at least one.
func blockLength(n int) int {
	return max(1, int(math.Round(math.Cbrt(float64(n)))))
}

// percentiles writes into out the percentiles ps of the values counted in
// counts (n of them) with the end-of-test summary's estimator: linear
// interpolation between the values of closest rank, each read as the
// middle of its bucket. With no value, every percentile is NaN.
func (d *dictionary) percentiles(counts []int64, n int64, ps []float64, out []float64) {
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return
	}
	// The ranks each percentile needs, looked up in one pass.
	type need struct {
		rank int64
		v    float64
	}
	ranks := make([]need, 0, 2*len(ps))
	for _, p := range ps {
		lo, _ := rankOf(p, n)
		ranks = append(ranks, need{rank: lo}, need{rank: min(lo+1, n-1)})
	}
	order := make([]int, len(ranks))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ranks[order[a]].rank < ranks[order[b]].rank })
	var cum int64
	j := 0
	for b, c := range counts {
		cum += c
		for j < len(order) && ranks[order[j]].rank < cum {
			ranks[order[j]].v = d.mids[b]
			j++
		}
		if j == len(order) {
			break
		}
	}
	for i, p := range ps {
		_, frac := rankOf(p, n)
		a, b := ranks[2*i].v, ranks[2*i+1].v
		out[i] = (a + (b-a)*frac) * metrics.TrendResolution
	}
}

// rankOf is the 0-based rank h = p/100·(n−1) of metrics.InterpolateRanks,
// split into its whole and fractional parts and clamped to the ranks.
func rankOf(p float64, n int64) (int64, float64) {
	h := min(max(p, 0), 100) / 100 * float64(n-1)
	lo := math.Floor(h)
	return int64(lo), h - lo
}

// quantile is the q-quantile (0 ≤ q ≤ 1) of sorted xs, by linear
// interpolation between closest ranks; NaN for no xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return metrics.InterpolateRanks(100*q, int64(len(xs)), func(r int64) float64 { return xs[r] })
}

// pooled is both runs' intervals one after the other, to draw runs from
// as if both came from one server: blocks of l consecutive intervals of
// either run (a block never spans the two).
type pooled struct {
	s      sample
	starts []int // the intervals where a block may start
	l      int
}

func newPooled(a, b *sample) *pooled {
	p := &pooled{l: blockLength(min(len(a.intervals), len(b.intervals)))}
	p.s.intervals = append(append(p.s.intervals, a.intervals...), b.intervals...)
	for k := 0; k+p.l <= len(a.intervals); k++ {
		p.starts = append(p.starts, k)
	}
	for k := 0; k+p.l <= len(b.intervals); k++ {
		p.starts = append(p.starts, len(a.intervals)+k)
	}
	return p
}

// resample fills counts with a moving-block bootstrap replicate of a run
// of n intervals drawn from the pool, and returns its number of samples.
func (p *pooled) resample(rng *rand.Rand, n int, counts []int64) int64 {
	clear(counts)
	var total int64
	for drawn := 0; drawn < n; {
		start := p.starts[rng.IntN(len(p.starts))]
		for k := start; k < start+p.l && drawn < n; k++ {
			total += p.s.add(k, counts)
			drawn++
		}
	}
	return total
}
