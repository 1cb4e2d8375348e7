// Package ratelimit is the test-wide limit on requests per second that
// k6's rps option sets: every VU of the instance takes its requests' start
// times from one Limiter.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter hands out start times 1/rate apart with a burst of one: a request
// that finds the limiter idle goes at once, one made while others wait goes
// one interval after the last start handed out. That is the token bucket
// k6 uses (golang.org/x/time/rate with a burst of one), reduced to
// arithmetic under a mutex: a rate.Limiter allocates a timer for every
// request it holds back and watches the caller's context through Done(),
// which the HTTP path avoids (see internal/httpclient's Lane).
type Limiter struct {
	interval time.Duration

	mu   sync.Mutex
	next time.Time // the earliest start of the next request
}

// New returns a limiter of perSecond requests per second, or nil, which
// means no limit, when perSecond is not positive, as in k6.
func New(perSecond int64) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	return &Limiter{interval: time.Second / time.Duration(perSecond)}
}

// Reserve takes the next start time for a request made at now and returns
// how long the request must wait for it; 0 when it may go at once. The
// start is the request's whether it waits or not.
func (l *Limiter) Reserve(now time.Time) time.Duration {
	l.mu.Lock()
	start := l.next
	if start.Before(now) {
		start = now
	}
	l.next = start.Add(l.interval)
	l.mu.Unlock()
	return start.Sub(now)
}
