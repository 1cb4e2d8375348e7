package poolserver

import (
	"sync"
	"testing"
	"time"
)

// The pool is the limit: 4 workers at 20 ms serve at most 200 requests a
// second, however many clients ask, and a machine only adds to the
// service time, so the measure is at most that. What the machine adds is
// measured beside it: workers sleeping 20 ms at a time, as the pool's do,
// wake L late on average, so each request holds its worker 20 ms + L.
// Handing a worker on wakes a blocked goroutine, which takes the machine
// no longer than a timer's wake-up: at most another L. So the pool serves
// at least 4/(20 ms + 2L) a second, less a request per worker at each end
// of the measured second.
func TestMeasureIsBoundedByThePool(t *testing.T) {
	const workers, service, window = 4, 20 * time.Millisecond, time.Second
	srv, err := Start(workers, service)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	stop := make(chan struct{})
	late := make(chan time.Duration)
	go func() { late <- lateness(workers, service, stop) }()
	rate, err := srv.Measure(t.Context(), 16, window)
	close(stop)
	l := <-late
	if err != nil {
		t.Fatal(err)
	}
	edges := 2 * float64(workers) / window.Seconds()
	lower := float64(workers)/(service+2*l).Seconds() - edges
	// A request served in the last moment may count in a window a hair
	// shorter than its service: allow one request per worker.
	upper := float64(workers)/service.Seconds() + float64(workers)
	t.Logf("measured %.1f requests/s; sleeps woke %v late on average: at least %.1f", rate, l, lower)
	if rate > upper || rate < lower {
		t.Errorf("measured %.1f requests/s, want at most %.0f and at least %.1f (sleeps of %v woke %v late)", rate, upper, lower, service, l)
	}
}

// lateness sleeps d over and over in n goroutines until stop is closed
// and returns how late they woke on average.
func lateness(n int, d time.Duration, stop chan struct{}) time.Duration {
	var (
		mu    sync.Mutex
		sum   time.Duration
		count int
		wg    sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				time.Sleep(d)
				mu.Lock()
				sum += time.Since(start) - d
				count++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return sum / time.Duration(count)
}
