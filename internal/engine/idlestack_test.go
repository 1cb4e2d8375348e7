//go:build !race

package engine_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"
)

// An idle VU's goroutine sleeps at the bottom of its script's call, and
// the frames above the sleep must stay within the 3,168 bytes a 4 KB
// goroutine stack leaves above its guard, or every VU's stack doubles to
// 8 KB for good (docs/performance.md). 500 VUs looping sleep(1) hold at
// most 6 KB of goroutine stack each (4 KB when none grew; 8 KB and more
// when the frames are too deep). The run is a process of its own, the test
// binary run again for this test alone: the runtime sizes new goroutines'
// stacks by the average of those it scanned before, which other tests
// would set. The race detector's instrumentation makes every frame larger,
// so the test runs without it.
func TestIdleVUStacksStaySmall(t *testing.T) {
	const vus = 500
	if os.Getenv("METRONOME_IDLE_STACK_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleVUStacksStaySmall$", "-test.count=1")
		cmd.Env = append(os.Environ(), "METRONOME_IDLE_STACK_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	script := `import { sleep } from 'k6';
export default function () { sleep(1); }
`
	opts := fmt.Sprintf(`{"scenarios": {"idle": {"executor": "constant-vus", "vus": %d, "duration": "3s"}}}`, vus)
	type figure struct {
		peak    uint64
		samples int
	}
	done, stop := make(chan figure), make(chan struct{})
	go func() {
		// The figure is the largest of four samples, each taken while
		// every VU is blocked in its sleep: its frames are then as deep as
		// an idle VU's get. The VUs wake for a moment once a second, so
		// the samples come 250 ms apart, within the run's 3 s however long
		// the VUs took to start; sampling ends with the run.
		buf := make([]byte, 16<<20)
		var f figure
		var ms runtime.MemStats
		for f.samples < 4 {
			select {
			case <-stop:
				done <- f
				return
			default:
			}
			if asleep(buf) < vus {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			runtime.ReadMemStats(&ms)
			f.peak = max(f.peak, ms.StackInuse)
			f.samples++
			time.Sleep(250 * time.Millisecond)
		}
		done <- f
	}()
	runBench(t, script, opts, nil)
	close(stop)
	f := <-done
	if f.samples < 4 {
		t.Fatalf("all %d VUs were asleep at %d moments of the run, want 4", vus, f.samples)
	}
	peak := f.peak
	if perVU := float64(peak) / vus; perVU > 6<<10 {
		t.Errorf("%d idle VUs hold %.0f bytes of goroutine stack each, want at most 6 KB", vus, perVU)
	}
}

// asleep counts the goroutines blocked in k6's sleep, as a dump of every
// goroutine's stack into buf shows them.
func asleep(buf []byte) int {
	n := runtime.Stack(buf, true)
	return bytes.Count(buf[:n], []byte("k6.(*napper).sleep("))
}

// TestIdleVUHeapProfile writes the heap profile that docs/performance.md's
// table "What an idle VU holds" is read from, when asked:
//
//	METRONOME_VU_HEAP_PROFILE=heap.pprof go test ./internal/engine -run TestIdleVUHeapProfile
//	go tool pprof -sample_index=inuse_space -top heap.pprof
//
// 10,000 VUs of the bench's idle script (it imports k6/http and k6, and its
// default function sleeps 1 s), every allocation sampled, the profile taken
// once every VU is asleep; divide by 10,000 for bytes per VU.
func TestIdleVUHeapProfile(t *testing.T) {
	path := os.Getenv("METRONOME_VU_HEAP_PROFILE")
	if path == "" {
		t.Skip("METRONOME_VU_HEAP_PROFILE is not set: set it to a file to write the profile to")
	}
	const vus = 10000
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = 512 * 1024 }()
	script := `import http from 'k6/http';
import { sleep } from 'k6';
export default function () { sleep(1); }
`
	opts := fmt.Sprintf(`{"scenarios": {"idle": {"executor": "constant-vus", "vus": %d, "duration": "20s"}}}`, vus)
	done, stop := make(chan error), make(chan struct{})
	go func() {
		buf := make([]byte, 64<<20)
		for asleep(buf) < vus {
			select {
			case <-stop:
				done <- fmt.Errorf("the %d VUs were never all asleep at once", vus)
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		runtime.GC()
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	runBench(t, script, opts, nil)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
