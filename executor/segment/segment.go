// Package segment is the arithmetic of execution segments: the part of a
// test one instance of a distributed run takes (--execution-segment), and
// k6's striping of VU, iteration and arrival indices over the segments of
// a sequence (--execution-segment-sequence), so that the instances
// together run exactly what one instance would. It imports nothing but the
// standard library.
package segment

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// maxStripeLen bounds the lowest common denominator of a segment
// sequence: the stripe is a table of that many positions.
const maxStripeLen = 10_000_000

// Segment is the part (From, To] of a test that one instance runs, as the
// --execution-segment flag gives it.
type Segment struct{ From, To *big.Rat }

// String writes the segment as k6's flag takes it, "from:to".
func (s Segment) String() string { return s.From.RatString() + ":" + s.To.RatString() }

// parseSegmentPoint reads one point of a segment or sequence: a fraction
// "1/3", a decimal "0.5" or an integer percentage "50%".
func parseSegmentPoint(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	r := new(big.Rat)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: a percentage must be a whole number, like 50%%", quote(s))
		}
		r.SetFrac64(n, 100)
	} else if _, ok := r.SetString(s); !ok || s == "" {
		return nil, fmt.Errorf("%s is not a fraction (1/3), a decimal (0.5) or a percentage (50%%)", quote(s))
	}
	if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, fmt.Errorf("%s is outside 0 to 1", quote(s))
	}
	return r, nil
}

// Parse reads an --execution-segment value: "a:b" is (a, b], a
// single value b is (0, b], and "" the whole test.
func Parse(s string) (Segment, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Segment{big.NewRat(0, 1), big.NewRat(1, 1)}, nil
	}
	from, to, ok := strings.Cut(s, ":")
	if !ok {
		from, to = "0", s
	}
	a, err := parseSegmentPoint(from)
	if err != nil {
		return Segment{}, err
	}
	b, err := parseSegmentPoint(to)
	if err != nil {
		return Segment{}, err
	}
	if a.Cmp(b) >= 0 {
		return Segment{}, fmt.Errorf("%s: the start must be below the end", quote(s))
	}
	return Segment{a, b}, nil
}

// ParseSequence reads an --execution-segment-sequence value: at least two
// increasing points, each consecutive pair one instance's segment.
func ParseSequence(s string) ([]*big.Rat, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%s: need at least two points, like 0,1/2,1", quote(s))
	}
	pts := make([]*big.Rat, len(parts))
	for i, p := range parts {
		r, err := parseSegmentPoint(p)
		if err != nil {
			return nil, err
		}
		if i > 0 && r.Cmp(pts[i-1]) <= 0 {
			return nil, fmt.Errorf("%s: the points must increase", quote(s))
		}
		pts[i] = r
	}
	return pts, nil
}

// Tuple is an instance's segment within the full sequence of segments the
// test is split into, with k6's striping of indices over the segments.
// The nil *Tuple is the whole test on one instance.
type Tuple struct {
	seg   Segment
	own   int        // this instance's segment in lens
	lens  []*big.Rat // segment lengths, in sequence order
	l     int64      // lcm of the lengths' denominators
	n     []int64    // lens[j]·l
	owned [][]int64  // the positions in [0, l) each segment owns, ascending
}

// NewTuple places seg in seq (nil: the segments of seg alone, 0:a, a:b,
// b:1). The sequence is padded with 0 and 1 where it does not reach them;
// seg must then be one of its segments.
func NewTuple(seg Segment, seq []*big.Rat) (*Tuple, error) {
	zero, one := big.NewRat(0, 1), big.NewRat(1, 1)
	if seq == nil {
		seq = []*big.Rat{seg.From, seg.To}
	}
	pts := slices.Clone(seq)
	if pts[0].Sign() != 0 {
		pts = append([]*big.Rat{zero}, pts...)
	}
	if pts[len(pts)-1].Cmp(one) != 0 {
		pts = append(pts, one)
	}
	own := -1
	lens := make([]*big.Rat, len(pts)-1)
	for j := range lens {
		lens[j] = new(big.Rat).Sub(pts[j+1], pts[j])
		if pts[j].Cmp(seg.From) == 0 && pts[j+1].Cmp(seg.To) == 0 {
			own = j
		}
	}
	if own < 0 {
		return nil, fmt.Errorf("the segment %s is not one of the sequence's segments", clip(seg.String()))
	}
	return newTuple(seg, own, lens)
}

// newTuple stripes segments of the given lengths, which sum to 1.
func newTuple(seg Segment, own int, lens []*big.Rat) (*Tuple, error) {
	l := big.NewInt(1)
	for _, r := range lens {
		d := r.Denom()
		g := new(big.Int).GCD(nil, nil, l, d)
		l.Mul(l, new(big.Int).Quo(d, g))
		if l.Cmp(big.NewInt(maxStripeLen)) > 0 {
			return nil, fmt.Errorf("the sequence's common denominator exceeds %d", maxStripeLen)
		}
	}
	t := &Tuple{seg: seg, own: own, lens: lens, l: l.Int64()}
	t.n = make([]int64, len(lens))
	for j, r := range lens {
		t.n[j] = new(big.Int).Quo(new(big.Int).Mul(r.Num(), l), r.Denom()).Int64()
	}
	// Biggest segments choose first; a segment takes position i when i has
	// reached its share c·L/n of the positions, with c those it has.
	order := make([]int, len(lens))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return t.n[order[a]] > t.n[order[b]] })
	t.owned = make([][]int64, len(lens))
	for j := range t.owned {
		t.owned[j] = make([]int64, 0, t.n[j])
	}
	for i := range t.l {
		for _, j := range order {
			c, nj := int64(len(t.owned[j])), t.n[j]
			if c >= nj {
				continue
			}
			if i > c*t.l/nj || (c*t.l%nj == 0 && i == c*t.l/nj) {
				t.owned[j] = append(t.owned[j], i)
				break
			}
		}
	}
	return t, nil
}

// Segment is the instance's segment.
func (t *Tuple) Segment() Segment { return t.seg }

// Length is the instance's share of the test, a fraction in (0, 1].
func (t *Tuple) Length() float64 {
	if t == nil {
		return 1
	}
	f, _ := t.lens[t.own].Float64()
	return f
}

// scaleOf is how many of the indices below v segment j owns.
func (t *Tuple) scaleOf(j int, v int64) int64 {
	o := t.owned[j]
	r := v % t.l
	return v/t.l*t.n[j] + int64(sort.Search(len(o), func(k int) bool { return o[k] >= r }))
}

// Scale is how many of the global indices below v this instance owns: its
// share of v VUs or iterations. The instances' shares of v sum to v.
func (t *Tuple) Scale(v int64) int64 {
	if t == nil {
		return v
	}
	return t.scaleOf(t.own, v)
}

// Global is the global 0-based index of the instance's k-th (0-based)
// index.
func (t *Tuple) Global(k int64) int64 {
	if t == nil {
		return k
	}
	n := t.n[t.own]
	return k/n*t.l + t.owned[t.own][k%n]
}

// NextOwned is the smallest global index at or above g that the instance
// owns.
func (t *Tuple) NextOwned(g int64) int64 {
	if t == nil {
		return g
	}
	o := t.owned[t.own]
	q, r := g/t.l, g%t.l
	k := sort.Search(len(o), func(k int) bool { return o[k] >= r })
	if k == len(o) {
		return (q+1)*t.l + o[0]
	}
	return q*t.l + o[k]
}

// Resegment re-splits the test as k6 does for executors whose work is
// bounded by v (the VUs of shared-iterations, maxVUs of arrival-rate):
// each segment's new length is its share of v over v. It returns nil when
// the instance's share of v is 0: the scenario has no work here. When v is
// a multiple of the stripe length nothing changes.
func (t *Tuple) Resegment(v int64) (*Tuple, bool) {
	if t == nil {
		return nil, true
	}
	if v > 0 && v%t.l == 0 {
		return t, true
	}
	if t.Scale(v) == 0 {
		return nil, false
	}
	var lens []*big.Rat
	own := 0
	for j := range t.lens {
		s := t.scaleOf(j, v)
		if s == 0 {
			continue
		}
		if j == t.own {
			own = len(lens)
		}
		lens = append(lens, big.NewRat(s, v))
	}
	r, err := newTuple(t.seg, own, lens)
	if err != nil {
		// The new denominators divide v, which the caller bounds; a
		// failure leaves the original striping, which is still a partition.
		return t, true
	}
	return r, true
}

// quote is s quoted for an error message, and clip is s cut for one:
// past 64 bytes only the two ends are kept. A segment read from another
// machine's file can be any length, and an error line should stay one
// line.
func quote(s string) string { return cut(s, strconv.Quote) }

func clip(s string) string { return cut(s, func(s string) string { return s }) }

func cut(s string, show func(string) string) string {
	const max = 64
	if len(s) <= max {
		return show(s)
	}
	return show(s[:max/2]) + fmt.Sprintf("…(%d bytes)…", len(s)) + show(s[len(s)-max/2:])
}
