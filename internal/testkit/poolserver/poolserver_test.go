package poolserver

import (
	"testing"
	"time"
)

// The pool is the limit: 4 workers at 20 ms serve at most 200 requests a
// second, however many clients ask, and a machine only adds to the
// service time, so the measure is at most that; a loaded machine still
// serves more than half of it.
func TestMeasureIsBoundedByThePool(t *testing.T) {
	srv, err := Start(4, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rate, err := srv.Measure(t.Context(), 16, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A request served in the last moment may count in a window a hair
	// shorter than its service: allow one request per worker.
	if rate > 200+4 || rate < 100 {
		t.Errorf("measured %.1f requests/s, want at most 204 and more than 100", rate)
	}
}
