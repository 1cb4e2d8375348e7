package cli

import (
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// memProfileEvery is how often the heap profiler looks at the live heap.
const memProfileEvery = 500 * time.Millisecond

// startMemProfile writes a heap profile to path whenever the live heap
// (as of the last garbage collection) has grown by a tenth over the
// largest seen, until the returned function is called:
// METRONOME_MEMPROFILE=mem.prof, for finding where memory goes at the
// run's peak rather than at exit, when the VUs may be gone. The file is
// replaced each time, so it always holds the largest heap's profile.
func startMemProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		t := time.NewTicker(memProfileEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if live := sample[0].Value.Uint64(); live > peak+peak/10 {
				peak = live
				writeHeapProfile(path)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
	}, nil
}

// writeHeapProfile replaces the file at path with the current heap
// profile; a failure leaves the previous profile in place.
func writeHeapProfile(path string) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		os.Remove(tmp)
		return
	}
	if f.Close() != nil {
		os.Remove(tmp)
		return
	}
	_ = os.Rename(tmp, path)
}
