package engine

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

func patchStatus(t *testing.T, addr, attrs string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+"/v1/status",
		strings.NewReader(`{"data":{"type":"status","id":"default","attributes":`+attrs+`}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
}

// getUntil polls url for up to 5 s until it answers want, and returns the
// last body: samples reach the metrics engine asynchronously.
func getUntil(t *testing.T, url, want string) string {
	t.Helper()
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got = strings.TrimSpace(string(b)); got == want {
			break
		}
	}
	return got
}

// With --paused the VUs are initialised and setup() waits for the API's
// resume; data PUT during the run is what teardown() gets.
func TestPausedRunWaitsForResume(t *testing.T) {
	f := &fakeScript{work: 10 * time.Millisecond}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		err, _, _ := runFakeScript(t, context.Background(), f,
			`{"scenarios":{"s":{"executor":"per-vu-iterations","vus":2,"iterations":3}}}`,
			func(c *Config) {
				c.Address, c.Paused = "127.0.0.1:0", true
				c.APIAddr = func(a string) { addrCh <- a }
			})
		done <- err
	}()
	addr := <-addrCh
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v1/status")
		if err == nil {
			var b strings.Builder
			buf := make([]byte, 512)
			n, _ := resp.Body.Read(buf)
			b.Write(buf[:n])
			resp.Body.Close()
			if strings.Contains(b.String(), `"status":4`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never reported status 4 (paused before run)")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// While paused, the gauges of the initialised VUs are there: k6
	// v2.2.0 answered exactly these bodies for a paused run of the same
	// scenario (curl on loopback).
	for id, want := range map[string]string{
		"vus":     `{"data":{"type":"metrics","id":"vus","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":0}}}}`,
		"vus_max": `{"data":{"type":"metrics","id":"vus_max","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":2}}}}`,
	} {
		if got := getUntil(t, "http://"+addr+"/v1/metrics/"+id, want); got != want {
			t.Errorf("GET /v1/metrics/%s while paused: %s\nwant %s", id, got, want)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := f.setups.Load(); n != 0 {
		t.Fatalf("setup() ran %d times while paused", n)
	}
	patchStatus(t, addr, `{"paused":false}`)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if f.setups.Load() != 1 || f.teardown.Load() != 1 || string(f.teardownData) != `{"token":"abc"}` {
		t.Errorf("setup %d, teardown %d with %s; want one each, with setup's data", f.setups.Load(), f.teardown.Load(), f.teardownData)
	}
}

// A stop while paused ends the run with 103 and runs nothing.
func TestPausedRunStopped(t *testing.T) {
	f := &fakeScript{}
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		err, _, _ := runFakeScript(t, context.Background(), f, fourVUs, func(c *Config) {
			c.Address, c.Paused = "127.0.0.1:0", true
			c.APIAddr = func(a string) { addrCh <- a }
		})
		done <- err
	}()
	addr := <-addrCh
	time.Sleep(50 * time.Millisecond)
	patchStatus(t, addr, `{"stopped":true}`)
	select {
	case err := <-done:
		if exitcode.Of(err) != exitcode.StoppedByAPI || f.setups.Load() != 0 {
			t.Errorf("Run: %v (code %d), setup ran %d times; want 103 and no setup", err, exitcode.Of(err), f.setups.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stopped paused run did not end")
	}
}
