package js_test

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"
)

func TestZZHeapProfile(t *testing.T) {
	if os.Getenv("HEAPPROF") == "" {
		t.Skip()
	}
	r := jstest.Load(t, map[string]string{"script.js": smallScript}, nil)
	noop := metrics.RecorderFunc(func(metrics.Sample) {})
	it := executor.Iteration{Scenario: jstest.DefaultScenario}
	var vus []executor.VU
	runtime.MemProfileRate = 512
	for i := range 300 {
		vu, _ := r.Script.NewVU(context.Background(), uint64(i+1), noop)
		vu.Run(context.Background(), it)
		vus = append(vus, vu)
	}
	runtime.GC()
	f, _ := os.Create(os.Getenv("HEAPPROF"))
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	runtime.KeepAlive(vus)
}
