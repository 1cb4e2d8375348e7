package js

import (
	"testing"

	"github.com/grafana/sobek"
)

// A rejection handled after all leaves no promise behind the tracked ones:
// endCall clears only up to the length, and a promise kept past it would
// keep a replaced runtime alive.
func TestHandledRejectionLetsGo(t *testing.T) {
	rt := sobek.New()
	a, _, _ := rt.NewPromise()
	b, _, _ := rt.NewPromise()
	var l eventLoop
	l.trackRejection(a, sobek.PromiseRejectionReject)
	l.trackRejection(b, sobek.PromiseRejectionReject)
	l.trackRejection(a, sobek.PromiseRejectionHandle)
	if len(l.rejected) != 1 || l.rejected[0] != b {
		t.Fatalf("tracked %v, want only the unhandled one", l.rejected)
	}
	if spare := l.rejected[:cap(l.rejected)][1]; spare != nil {
		t.Error("the handled promise is still held past the length")
	}
}
