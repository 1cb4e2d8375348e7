package js_test

import (
	"context"
	"io"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// lastInlet is the inlet the k6/x/inletop module used last, for the test
// to push through once the iteration is over.
var (
	lastInletMu sync.Mutex
	lastInlet   *modules.VUInlet
	inletTrend  *metrics.Metric
)

// A module that records off the VU's goroutine, as xk6 extensions push
// samples: through the VU's modules.VUInlet.
func init() {
	modules.Register("k6/x/inletop", modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		trend, err := vu.InitEnv().Registry.New("inlet_op_duration", metrics.Trend, metrics.Time)
		if err != nil {
			return modules.Exports{}, err
		}
		inletTrend = trend
		inlet := func() *modules.VUInlet {
			p := vu.(modules.InletVU).Inlet()
			lastInletMu.Lock()
			lastInlet = p
			lastInletMu.Unlock()
			return p
		}
		return modules.Exports{Named: map[string]any{
			// op pushes one sample of ms from a goroutine of its own.
			"op": func(ms float64) bool {
				p, ctx, tags := inlet(), vu.Context(), vu.State().Tags.With("op", "GET")
				done := make(chan bool)
				go func() {
					done <- p.Send(ctx, []metrics.Sample{{Metric: trend, Tags: tags, Time: time.Now(), Value: ms}})
				}()
				return <-done
			},
			// io writes n bytes over a connection counted by the inlet
			// and reads them back.
			"io": func(n int) int {
				a, b := net.Pipe()
				defer a.Close()
				defer b.Close()
				c := inlet().Count(a)
				go func() { _, _ = io.Copy(b, b) }()
				wrote := make(chan struct{})
				go func() { _, _ = c.Write(make([]byte, n)); close(wrote) }()
				got, _ := io.ReadFull(c, make([]byte, n))
				<-wrote // the write is counted once it returns, maybe after the echo arrived
				return got
			},
		}}, nil
	}))
}

const inletScript = `
import ext from "k6/x/inletop";
export function setup() { if (!ext.op(5)) throw new Error("setup push refused"); }
export default function () {
	if (!ext.op(12)) throw new Error("push refused");
	if (ext.io(300) !== 300) throw new Error("short io");
}
`

// Samples pushed through a VU's inlet from another goroutine follow the
// VU recorder's rules: a named trend's sample records corrected_latency
// with the iteration's lag, and nothing in setup(); once the call is over
// the inlet drops what comes; a counted connection's bytes are the
// iteration's data_sent and data_received.
func TestVUInletFollowsTheVUsRules(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": inletScript},
		&jstest.Config{Options: &config.Options{LatencyTrends: []string{"inlet_op_duration"}}})
	if _, err := r.Script.Setup(context.Background(), &discardRecorder{}); err != nil {
		t.Fatal(err)
	}
	if got := len(correctedOf(r, r.Sent, "inlet_op_duration")); got != 0 {
		t.Errorf("setup's push recorded %d corrected_latency samples, want none", got)
	}
	if got := len(jstest.Samples(r.Sent, inletTrend)); got != 1 {
		t.Fatalf("setup's push: %d samples arrived, want 1", got)
	}

	vu, rec := r.NewVU(t, 1)
	const lag = 40 * time.Millisecond
	intended := time.Now().Add(-lag)
	res := vu.Run(context.Background(), executor.Iteration{Scenario: jstest.DefaultScenario, Intended: intended})
	if res.Outcome != executor.Completed {
		t.Fatalf("iteration %v: %s", res.Outcome, r.Stderr)
	}
	raw := jstest.Samples(r.Sent, inletTrend)
	cor := correctedOf(r, r.Sent, "inlet_op_duration")
	if len(raw) != 2 || len(cor) != 1 {
		t.Fatalf("%d samples and %d corrected_latency arrived, want 2 (setup, iteration) and 1", len(raw), len(cor))
	}
	realLag := metrics.Milliseconds(res.Start.Sub(intended))
	if math.Abs(cor[0].Value-(12+realLag)) > 1e-6 || !cor[0].Time.Equal(raw[1].Time) {
		t.Errorf("corrected %v ms at %v, want 12 + the lag %v at %v", cor[0].Value, cor[0].Time, realLag, raw[1].Time)
	}
	if cor[0].Tags != raw[1].Tags.With("metric", "inlet_op_duration") {
		t.Errorf("corrected tags %v, want the sample's %v plus metric", cor[0].Tags, raw[1].Tags)
	}

	lastInletMu.Lock()
	p := lastInlet
	lastInletMu.Unlock()
	if p.Send(context.Background(), []metrics.Sample{{Metric: inletTrend, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1}}) {
		t.Error("a push after the iteration ended was taken; k6 drops it (the iteration's context is done)")
	}
	if got := len(jstest.Samples(r.Sent, inletTrend)); got != 2 {
		t.Errorf("%d samples after the late push, want still 2", got)
	}

	for _, c := range []struct {
		m    *metrics.Metric
		want float64
	}{{r.Builtin.DataSent, 300}, {r.Builtin.DataReceived, 300}} {
		s := jstest.Samples(rec, c.m)
		if len(s) != 1 || s[0].Value != c.want {
			t.Errorf("%s: %v, want one sample of %v bytes", c.m.Name, s, c.want)
		}
	}
}

// An interrupted iteration's inlet drops what is pushed after the cut,
// as the VU's recorder does.
func TestVUInletDropsAfterInterruption(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import ext from "k6/x/inletop";
import { sleep } from "k6";
export default function () { ext.op(1); sleep(10); ext.op(2); }
`}, nil)
	vu, _ := r.NewVU(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res := vu.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario})
	if res.Outcome != executor.Interrupted {
		t.Fatalf("iteration %v, want interrupted", res.Outcome)
	}
	lastInletMu.Lock()
	p := lastInlet
	lastInletMu.Unlock()
	if p.Send(nil, []metrics.Sample{{Metric: inletTrend, Tags: metrics.EmptyTags, Time: time.Now(), Value: 3}}) {
		t.Error("a push after the interruption was taken")
	}
	if s := jstest.Samples(r.Sent, inletTrend); len(s) != 1 || s[0].Value != 1 {
		t.Errorf("samples %v, want only the one pushed before the cut", s)
	}
}

type discardRecorder struct{}

func (discardRecorder) Record(metrics.Sample) {}
