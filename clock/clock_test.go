package clock_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
)

// Until returns at the instant asked for, again and again on one timer,
// and returns false at once when done closes first.
func TestSleeperUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := clock.Sleeper{Clock: clock.Real}
		defer s.Stop()
		t0 := time.Now()
		never := make(chan struct{})
		for _, at := range []time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 10 * time.Second, 10*time.Second + 1} {
			if !s.Until(t0.Add(at), never) {
				t.Fatalf("Until(%v) returned false with done open", at)
			}
			if got := time.Since(t0); got != at {
				t.Fatalf("Until(%v) returned at %v", at, got)
			}
		}
		done := make(chan struct{})
		time.AfterFunc(time.Second, func() { close(done) })
		start := time.Now()
		if s.Until(start.Add(time.Hour), done) {
			t.Fatal("Until returned true though done closed first")
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("Until returned %v after the start, want when done closed (1s)", got)
		}
		if s.Until(time.Now().Add(-time.Second), done) {
			t.Error("Until of a past instant returned true with done closed")
		}
	})
}

// A Sleeper on Precise never wakes before the instant asked for, whether
// the wait is all kernel timer or Go timer first, and a long wait still
// ends when done closes.
func TestPreciseSleeper(t *testing.T) {
	s := clock.Sleeper{Clock: clock.Precise}
	defer s.Stop()
	never := make(chan struct{})
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 1500 * time.Microsecond, 2500 * time.Microsecond, 6 * time.Millisecond} {
		for range 5 {
			at := time.Now().Add(d)
			if !s.Until(at, never) {
				t.Fatalf("Until(+%v) returned false with done open", d)
			}
			if now := time.Now(); now.Before(at) {
				t.Fatalf("Until(+%v) returned %v early", d, at.Sub(now))
			}
		}
	}
	done := make(chan struct{})
	time.AfterFunc(5*time.Millisecond, func() { close(done) })
	at := time.Now().Add(time.Minute)
	if s.Until(at, done) {
		t.Fatal("Until returned true though done closed first")
	}
	if time.Now().After(at) {
		t.Fatal("Until did not return when done closed")
	}
}

// BenchmarkSleeperLateness reports how late a Sleeper wakes for waits of
// a few milliseconds, on Go's timers (Real) and on the kernel timer
// (Precise): the median and 99th percentile in microseconds.
func BenchmarkSleeperLateness(b *testing.B) {
	for _, c := range []struct {
		name  string
		clock clock.Clock
	}{{"real", clock.Real}, {"precise", clock.Precise}} {
		b.Run(c.name, func(b *testing.B) {
			s := clock.Sleeper{Clock: c.clock}
			defer s.Stop()
			never := make(chan struct{})
			late := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				at := time.Now().Add(time.Duration(1+i%4) * time.Millisecond)
				s.Until(at, never)
				late = append(late, time.Since(at))
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "p99-µs")
		})
	}
}
