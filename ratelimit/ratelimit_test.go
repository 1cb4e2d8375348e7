package ratelimit

import (
	"sync"
	"testing"
	"time"
)

func TestNoLimit(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if New(n) != nil {
			t.Errorf("New(%d) is a limiter; k6 sets no limit then", n)
		}
	}
}

// Reserve spaces starts 1/rate apart with a burst of one: at 5 per second
// a burst of requests at t=0 goes at 0, 200, 400 ms; a request after a
// pause goes at once, and only one.
func TestReserveSpacesStarts(t *testing.T) {
	l := New(5)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	steps := []struct {
		now, wait int // ms
	}{
		{0, 0}, {0, 200}, {0, 400}, // a burst waits its turn
		{100, 500},             // made while three wait: after the third
		{2000, 0}, {2000, 200}, // idle since 800 ms: one goes at once, not two
		{2150, 250},         // the next slot is 2400
		{2400 + 200 + 1, 0}, // just after the slot it would have had
	}
	for i, s := range steps {
		if got := l.Reserve(at(s.now)); got != time.Duration(s.wait)*time.Millisecond {
			t.Errorf("step %d: Reserve at %d ms waits %v, want %d ms", i, s.now, got, s.wait)
		}
	}
}

// Concurrent callers share the limit: n requests made at once get n
// distinct starts, one interval apart.
func TestReserveConcurrent(t *testing.T) {
	const n = 64
	l := New(1000)
	now := time.Unix(0, 0)
	waits := make(chan time.Duration, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { waits <- l.Reserve(now) })
	}
	wg.Wait()
	close(waits)
	seen := map[time.Duration]bool{}
	for w := range waits {
		if w%time.Millisecond != 0 || w >= n*time.Millisecond || seen[w] {
			t.Fatalf("wait %v repeats or is off the 1 ms grid", w)
		}
		seen[w] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct starts, want %d", len(seen), n)
	}
}

// Reserve allocates nothing: it is on the path of every request.
func TestReserveAllocatesNothing(t *testing.T) {
	l := New(1_000_000)
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() { l.Reserve(now) }); n != 0 {
		t.Fatalf("Reserve allocates %v times", n)
	}
}

// BenchmarkReserve is the limiter's cost for a request that does not
// wait, time.Now included.
func BenchmarkReserve(b *testing.B) {
	l := New(1e9)
	b.ReportAllocs()
	for b.Loop() {
		l.Reserve(time.Now())
	}
}
