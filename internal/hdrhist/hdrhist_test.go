package hdrhist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	lowest  = 1
	highest = 24 * 60 * 60 * 1_000_000
	digits  = 3
)

// A Hist answers as a dense histogram of the same values would, before
// and after it turns dense, and writes the log line hdrhistogram-go
// writes of it.
func TestHistMatchesDense(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, Dense - 1, Dense, 3 * Dense} {
		var h Hist
		ref := hdrhistogram.New(lowest, highest, digits)
		for range n {
			v := int64(rng.ExpFloat64()*20_000) + 1
			p.Record(&h, v)
			_ = ref.RecordValue(v)
		}
		if (h.dense != nil) != (n >= Dense) {
			t.Errorf("%d values: dense %v", n, h.dense != nil)
		}
		if h.TotalCount() != ref.TotalCount() || h.Max() != ref.Max() {
			t.Errorf("%d values: count %d max %d, want %d %d", n, h.TotalCount(), h.Max(), ref.TotalCount(), ref.Max())
		}
		for _, q := range []float64{50, 99, 99.9} {
			if got, want := h.ValueAtPercentile(q), ref.ValueAtPercentile(q); got != want {
				t.Errorf("%d values: p%g = %d, want %d", n, q, got, want)
			}
		}
		merged := hdrhistogram.New(lowest, highest, digits)
		if dropped := h.MergeInto(merged); dropped != 0 || !merged.Equals(ref) {
			t.Errorf("%d values: merged into a dense one, %d dropped, equal %v", n, dropped, merged.Equals(ref))
		}
		checkLogLine(t, p.NewEncoder(), &h, ref, fmt.Sprintf("%d values", n))
		p.Release(&h)
		if h.TotalCount() != 0 {
			t.Errorf("%d values: released but not empty", n)
		}
	}
}

// Once the pool holds storage, recording a series' values, even through
// the switch to dense, and releasing it allocates nothing.
func TestRecordReusesStorage(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	cycle := func() {
		var quiet, busy Hist
		for i := range 2 * Dense {
			p.Record(&busy, int64(i%500)*100+1)
			if i%100 == 0 {
				p.Record(&quiet, int64(i)+1)
			}
		}
		p.Release(&quiet)
		p.Release(&busy)
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Errorf("%v allocations a cycle, want 0", n)
	}
}

// Merging dense histograms (intervals read from a log) gives what
// recording their values would, turning dense once the total is busy.
func TestMerge(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	var h Hist
	ref := hdrhistogram.New(lowest, highest, digits)
	for _, n := range []int{10, 500, Dense, 3} {
		src := hdrhistogram.NewPacked(lowest, highest, digits)
		for i := range n {
			_ = src.RecordValue(int64(i*37 + 1))
		}
		if dropped := p.MergePacked(&h, src); dropped != 0 {
			t.Fatalf("%d dropped", dropped)
		}
		src.MergeInto(ref)
		got := hdrhistogram.New(lowest, highest, digits)
		h.MergeInto(got)
		if !got.Equals(ref) || (h.dense != nil) != (ref.TotalCount() >= Dense) {
			t.Errorf("after %d more: count %d (dense %v), want %d", n, h.TotalCount(), h.dense != nil, ref.TotalCount())
		}
	}
}

// inflated is an encoded histogram's payload: its header and counts as
// they are before compression.
func inflated(t testing.TB, enc []byte) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil || len(raw) < 8 {
		t.Fatalf("not base64 of a compressed histogram: %v", err)
	}
	if n := int(binary.BigEndian.Uint32(raw[4:])); n != len(raw)-8 {
		t.Fatalf("compressed length %d, the rest is %d bytes", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// libraryEncode is hdrhistogram-go's encoding of h.
func libraryEncode(p *Pool, h *Hist) ([]byte, error) {
	switch {
	case h.dense != nil:
		return h.dense.EncodeV2()
	case h.sparse != nil:
		return h.sparse.EncodeV2()
	}
	return hdrhistogram.NewPacked(p.lowest, p.highest, p.digits).EncodeV2()
}

// checkEncoding checks that the Encoder's form of h inflates to the bytes
// hdrhistogram-go's EncodeV2 does and decodes to the same histogram.
func checkEncoding(t testing.TB, p *Pool, e *Encoder, h *Hist, what string) {
	t.Helper()
	got := e.Append([]byte("prefix"), h)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("%s: Append lost what it appended to", what)
	}
	got = got[len("prefix"):]
	want, err := libraryEncode(p, h)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := inflated(t, got), inflated(t, want); !bytes.Equal(g, w) {
		t.Fatalf("%s: payload\n%x\nwant hdrhistogram-go's\n%x", what, g, w)
	}
	dec, err := hdrhistogram.DecodePacked(got)
	if err != nil {
		t.Fatalf("%s: hdrhistogram-go cannot decode it: %v", what, err)
	}
	a, b := hdrhistogram.New(p.lowest, p.highest, p.digits), hdrhistogram.New(p.lowest, p.highest, p.digits)
	dec.MergeInto(a)
	h.MergeInto(b)
	if !a.Equals(b) || dec.TotalCount() != h.TotalCount() {
		t.Fatalf("%s: decodes to %d values, not the %d encoded", what, dec.TotalCount(), h.TotalCount())
	}
}

// The Encoder's payload is hdrhistogram-go's, byte for byte, for empty,
// sparse, dense and wide histograms, small ones stored and large ones
// compressed, and it decodes to the histogram encoded.
func TestEncoderMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, geo := range [][3]int64{{lowest, highest, digits}, {1, 1_000_000_000_000, 3}, {1000, 3_600_000_000, 2}, {1, 2, 1}} {
		p := NewPool(geo[0], geo[1], int(geo[2]))
		e := p.NewEncoder()
		for _, n := range []int{0, 1, 2, 10, 100, 1000, Dense - 1, Dense, 3 * Dense} {
			for _, spread := range []float64{1, 1e3, 1e6, 1e9} {
				var h Hist
				for range n {
					p.Record(&h, min(int64(rng.ExpFloat64()*spread), geo[1]))
				}
				checkEncoding(t, p, e, &h, fmt.Sprintf("%v n=%d spread %g", geo, n, spread))
				ref := hdrhistogram.New(geo[0], geo[1], int(geo[2]))
				h.MergeInto(ref)
				checkLogLine(t, e, &h, ref, fmt.Sprintf("%v n=%d spread %g", geo, n, spread))
				p.Release(&h)
			}
		}
		var h Hist
		for _, v := range []int64{0, 1, geo[1], geo[1] / 2, 0, geo[1]} {
			p.Record(&h, v)
		}
		checkEncoding(t, p, e, &h, fmt.Sprintf("%v extremes", geo))
		p.Release(&h)
		// Counts of every varint length, up to the ninth byte's.
		h.sparse = p.newSparse()
		for i := range 63 {
			_ = h.sparse.RecordValues(int64(i+1), 1<<i)
		}
		checkEncoding(t, p, e, &h, fmt.Sprintf("%v huge counts", geo))
		p.Release(&h)
	}
}

// checkLogLine checks the Encoder's log line of h against the line
// hdrhistogram-go's log writer writes of ref, which holds h's values: the
// same tag, times and maximum, a histogram that inflates to the same
// payload, and a line hdrhistogram-go's log reader reads back as ref.
func checkLogLine(t *testing.T, e *Encoder, h *Hist, ref *hdrhistogram.Histogram, what string) {
	t.Helper()
	got, err := e.AppendLogLine([]byte("#prefix\n"), h, "metric=x;name=a%2Cb", 1_700_000_000_123, 1_700_000_001_123)
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.TrimPrefix(got, []byte("#prefix\n"))
	var want bytes.Buffer
	if h.TotalCount() > 0 {
		ref.SetTag("metric=x;name=a%2Cb")
		ref.SetStartTimeMs(1_700_000_000_123)
		ref.SetEndTimeMs(1_700_000_001_123)
		if err := hdrhistogram.NewHistogramLogWriter(&want).OutputIntervalHistogram(ref); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) == 0 || want.Len() == 0 {
		if len(got) != want.Len() {
			t.Fatalf("%s: log line %q, want %q", what, got, want.String())
		}
		return
	}
	g, w := bytes.LastIndexByte(got, ','), bytes.LastIndexByte(want.Bytes(), ',')
	if string(got[:g]) != want.String()[:w] || !bytes.HasSuffix(got, []byte("\n")) {
		t.Fatalf("%s: log line %q, want %q", what, got, want.String())
	}
	if a, b := inflated(t, bytes.TrimSuffix(got[g+1:], []byte("\n"))), inflated(t, bytes.TrimSuffix(want.Bytes()[w+1:], []byte("\n"))); !bytes.Equal(a, b) {
		t.Fatalf("%s: the line's histogram inflates to\n%x\nwant\n%x", what, a, b)
	}
	back, err := hdrhistogram.NewHistogramLogReader(bytes.NewReader(got)).NextIntervalHistogram()
	if err != nil || !back.Equals(ref) {
		t.Fatalf("%s: hdrhistogram-go's log reader reads the line as %v (%v)", what, back, err)
	}
}

// A tag that would split a log line is refused.
func TestLogLineRefusesSplittingTags(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	var h Hist
	p.Record(&h, 5)
	for _, tag := range []string{"a,b", "a b", "a\nb", "a\rb", ",", " x"} {
		if b, err := p.NewEncoder().AppendLogLine(nil, &h, tag, 0, 1000); err == nil || len(b) != 0 {
			t.Errorf("tag %q: %q, %v", tag, b, err)
		}
	}
}

// Once warm, encoding allocates nothing, sparse or dense.
func TestEncoderReusesBuffers(t *testing.T) {
	p := NewPool(lowest, highest, digits)
	e := p.NewEncoder()
	var quiet, busy Hist
	for i := range 3 * Dense {
		p.Record(&busy, int64(i*i%900_000)+1)
		if i%300 == 0 {
			p.Record(&quiet, int64(i)+1)
		}
	}
	dst := make([]byte, 0, 64<<10)
	cycle := func() {
		dst = e.Append(dst[:0], &quiet)
		dst = e.Append(dst[:0], &busy)
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Errorf("%v allocations to encode two histograms, want 0", n)
	}
}

// FuzzEncoder records what the input says (pairs of a value and a count)
// and checks the Encoder against hdrhistogram-go.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add(bytes.Repeat([]byte{0xff, 0x01, 0x00, 0x10, 0x7f, 0x3}, 50))
	p := NewPool(1, 1_000_000_000_000, 3)
	e := p.NewEncoder()
	f.Fuzz(func(t *testing.T, in []byte) {
		var h Hist
		defer p.Release(&h)
		for len(in) >= 6 {
			v := int64(binary.LittleEndian.Uint32(in)) << (in[4] % 24) % (p.highest + 1)
			for range int(in[5]%64) + 1 {
				p.Record(&h, v)
			}
			in = in[6:]
		}
		checkEncoding(t, p, e, &h, "fuzzed")
	})
}

// Merging Hists, sparse or dense, into sparse or dense ones, cloning and
// resetting them, through a shared pool as through a reusing one, gives
// what recording the same values into one dense histogram would; a merge
// turns the result dense once it holds Dense values.
func TestMergeHistsCloneReset(t *testing.T) {
	for _, p := range []*Pool{NewPool(lowest, highest, digits), NewSharedPool(lowest, highest, digits)} {
		for _, sizes := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {3, 7}, {Dense - 10, 9}, {Dense - 10, 10}, {Dense, 4}, {4, Dense}, {Dense, 2 * Dense}} {
			var a, b Hist
			ref := hdrhistogram.New(lowest, highest, digits)
			for i := range sizes[0] {
				p.Record(&a, int64(i*13+1))
				_ = ref.RecordValue(int64(i*13 + 1))
			}
			for i := range sizes[1] {
				p.Record(&b, int64(i*7+500))
				_ = ref.RecordValue(int64(i*7 + 500))
			}
			before := p.Clone(&a)
			if dropped := p.Merge(&a, &b); dropped != 0 {
				t.Fatalf("%v: %d dropped", sizes, dropped)
			}
			got := hdrhistogram.New(lowest, highest, digits)
			a.MergeInto(got)
			if !got.Equals(ref) || (a.dense != nil) != (ref.TotalCount() >= Dense) {
				t.Errorf("%v: merged %d values (dense %v), want %d", sizes, a.TotalCount(), a.dense != nil, ref.TotalCount())
			}
			packed := hdrhistogram.NewPacked(lowest, highest, digits)
			if a.MergeIntoPacked(packed); packed.TotalCount() != ref.TotalCount() {
				t.Errorf("%v: packed copy holds %d, want %d", sizes, packed.TotalCount(), ref.TotalCount())
			}
			for _, q := range []float64{1, 50, 99.9} {
				if g, w := packed.ValueAtPercentile(q), ref.ValueAtPercentile(q); g != w {
					t.Errorf("%v: packed copy p%g = %d, want %d", sizes, q, g, w)
				}
			}
			if before.TotalCount() != int64(sizes[0]) {
				t.Errorf("%v: the clone changed with its original: %d values", sizes, before.TotalCount())
			}
			dense := a.dense != nil
			a.Reset()
			if a.TotalCount() != 0 || (a.dense != nil) != dense {
				t.Errorf("%v: reset left %d values, dense %v (was %v)", sizes, a.TotalCount(), a.dense != nil, dense)
			}
			p.Record(&a, 42)
			if a.TotalCount() != 1 || a.ValueAtPercentile(50) != 42 {
				t.Errorf("%v: after reset: %d values, median %d", sizes, a.TotalCount(), a.ValueAtPercentile(50))
			}
			p.Release(&a)
			p.Release(&b)
			p.Release(&before)
		}
		if p.shared && (len(p.sparse) != 0 || len(p.dense) != 0) {
			t.Errorf("a shared pool kept %d sparse and %d dense histograms", len(p.sparse), len(p.dense))
		}
	}
}

// A shared pool is used by many goroutines at once (the race detector
// checks it keeps no state of its own).
func TestSharedPoolConcurrent(t *testing.T) {
	p := NewSharedPool(lowest, highest, digits)
	done := make(chan int64)
	for g := range 4 {
		go func() {
			var h, o Hist
			for i := range 3 * Dense {
				p.Record(&h, int64(i+g))
				if i%50 == 0 {
					p.Record(&o, int64(i))
				}
			}
			p.Merge(&h, &o)
			c := p.Clone(&h)
			p.Release(&h)
			done <- c.TotalCount()
		}()
	}
	for range 4 {
		if n := <-done; n != 3*Dense+3*Dense/50+1 {
			t.Errorf("%d values, want %d", n, 3*Dense+3*Dense/50+1)
		}
	}
}
