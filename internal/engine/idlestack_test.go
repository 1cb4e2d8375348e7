//go:build !race

package engine_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
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
	done := make(chan uint64)
	go func() {
		// Every VU has slept at least once after 1.5 s; the largest
		// sample from then on is the figure.
		time.Sleep(1500 * time.Millisecond)
		var peak uint64
		var ms runtime.MemStats
		for range 4 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.StackInuse)
			time.Sleep(250 * time.Millisecond)
		}
		done <- peak
	}()
	runBench(t, script, opts, nil)
	peak := <-done
	if perVU := float64(peak) / vus; perVU > 6<<10 {
		t.Errorf("%d idle VUs hold %.0f bytes of goroutine stack each, want at most 6 KB", vus, perVU)
	}
}
