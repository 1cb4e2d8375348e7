package httpclient

import (
	"context"
	"time"

	"github.com/metronome-load/metronome/ratelimit"
)

// holdBack waits until the rps limit lets a request go, as k6 does: once
// per request (a redirect is no new request; each element of a batch is
// one), before anything of the request is timed, so the wait is in none
// of its timings (http_req_blocked included) and not in its timeout, but
// it is in the iteration's duration. A VU whose context ends stops
// waiting, and the request then fails as any request of an ended
// iteration does. On the VU's lane the wait allocates nothing: like the
// lane's timer it looks at the VU's context every PollParent rather than
// through Done().
func holdBack(ctx context.Context, lim *ratelimit.Limiter, l *Lane) {
	d := lim.Reserve(time.Now())
	if d <= 0 {
		return
	}
	if l == nil {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return
	}
	until := time.Now().Add(d)
	if l.pause == nil {
		l.pause = time.NewTimer(time.Hour)
	}
	for ctx.Err() == nil {
		left := time.Until(until)
		if left <= 0 {
			return
		}
		l.pause.Reset(min(left, PollParent))
		<-l.pause.C
	}
}
