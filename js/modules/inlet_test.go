package modules_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// A VUInlet passes samples only while a call is open and neither its
// context nor the pusher's ended; in a back-filling closed model the
// tallies of what it recorded join the VU's account at Close.
func TestVUInletGateAndLatency(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	trend, err := reg.New("op_duration", metrics.Trend, metrics.Time)
	if err != nil {
		t.Fatal(err)
	}
	var got []metrics.Sample
	in := metrics.NewInlet(func(batch []metrics.Sample) { got = append(got, batch...) })
	p := modules.NewVUInlet(in, b.CorrectedLatency, []*metrics.Metric{trend})
	push := func(ctx context.Context, v float64) bool {
		return p.Send(ctx, []metrics.Sample{{Metric: trend, Tags: metrics.EmptyTags, Time: time.Unix(1, 0), Value: v}})
	}

	if push(nil, 1) {
		t.Error("taken before any call was open")
	}
	fill := &executor.BackFiller{Interval: 2 * time.Millisecond}
	lat := executor.Iteration{BackFill: fill}.Latency(time.Unix(1, 0))
	ctx, cancel := context.WithCancel(context.Background())
	p.Open(ctx, lat)
	if !push(ctx, 6) { // 6, back-filled 4, 2
		t.Fatal("refused while the call is open")
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if push(done, 1) {
		t.Error("taken on the pusher's done context")
	}
	cancel()
	if push(nil, 1) {
		t.Error("taken after the call's context ended")
	}
	if fill.Requests != 0 {
		t.Errorf("tallied into the VU's account before Close: %+v", *fill)
	}
	p.Close(lat)
	if fill.Requests != 1 || fill.Filled != 2 {
		t.Errorf("account after Close %+v, want 1 request, 2 filled", *fill)
	}
	if push(nil, 1) {
		t.Error("taken after Close")
	}
	var raw, corrected []float64
	for _, s := range got {
		switch s.Metric {
		case trend:
			raw = append(raw, s.Value)
		case b.CorrectedLatency:
			if m, _ := s.Tags.Get(executor.LatencyTrendTag); m != "op_duration" {
				t.Errorf("corrected_latency tagged metric=%q", m)
			}
			corrected = append(corrected, s.Value)
		}
	}
	if len(raw) != 1 || raw[0] != 6 || len(corrected) != 3 || corrected[0] != 6 || corrected[2] != 2 {
		t.Errorf("samples %v, corrected %v; want [6] and [6 4 2]", raw, corrected)
	}
}

// Count's connection adds the bytes read and written to what Close
// returns, once.
func TestVUInletCountsBytes(t *testing.T) {
	p := modules.NewVUInlet(nil, nil, nil)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := p.Count(a)
	go func() {
		buf := make([]byte, 10)
		n, _ := b.Read(buf)
		_, _ = b.Write(buf[:n-3])
	}()
	if _, err := c.Write(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if sent, received := p.Close(executor.Latency{}); sent != 10 || received != 7 {
		t.Errorf("Close returned %d sent, %d received; want 10 and 7", sent, received)
	}
	if sent, received := p.Close(executor.Latency{}); sent != 0 || received != 0 {
		t.Errorf("second Close returned %d, %d; want 0, 0", sent, received)
	}
}
