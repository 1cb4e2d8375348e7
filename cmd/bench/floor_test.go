//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The closed floor client counts exactly the requests the server answered,
// and a target that refuses connections is an error, not zero iterations.
func TestClosedFloorClientCountsItsRequests(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := closedFloorClient(&out, srv.URL+"/", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var res closedFloorResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if res.Iterations <= 0 || res.Iterations != served.Load() {
		t.Errorf("floor counted %d iterations, the server answered %d", res.Iterations, served.Load())
	}
	if res.PerSecond <= 0 {
		t.Errorf("per second %v", res.PerSecond)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()
	out.Reset()
	if err := closedFloorClient(&out, closed, 100*time.Millisecond); err == nil {
		t.Errorf("a refused target gave no error, output %q", out.String())
	}
}
