package httpclient

import (
	"context"
	"testing"

	"github.com/metronome-load/metronome/ratelimit"
)

// Holding a request back on the VU's lane allocates nothing once the
// lane's pause timer exists, however often it waits.
func TestHoldBackAllocatesNothing(t *testing.T) {
	l := NewLane()
	lim := ratelimit.New(100_000) // 10 µs apart: every call but the first waits
	ctx := context.Background()
	holdBack(ctx, lim, l)
	if n := testing.AllocsPerRun(50, func() { holdBack(ctx, lim, l) }); n != 0 {
		t.Fatalf("holdBack allocates %v times per request", n)
	}
}
