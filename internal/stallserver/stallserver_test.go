package stallserver

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestStallEnd(t *testing.T) {
	s := Schedule{Length: 500 * time.Millisecond, Period: 5 * time.Second, First: time.Second}
	cases := []struct {
		at   time.Duration
		end  time.Duration
		held bool
	}{
		{0, 0, false},
		{999 * time.Millisecond, 0, false},
		{time.Second, 1500 * time.Millisecond, true},
		{1499 * time.Millisecond, 1500 * time.Millisecond, true},
		{1500 * time.Millisecond, 0, false},
		{6200 * time.Millisecond, 6500 * time.Millisecond, true},
		{6500 * time.Millisecond, 0, false},
		{1000*time.Second + 1200*time.Millisecond, 1000*time.Second + 1500*time.Millisecond, true},
	}
	for _, c := range cases {
		end, ok := s.StallEnd(c.at)
		if ok != c.held || end != c.end {
			t.Errorf("StallEnd(%s) = %s, %v; want %s, %v", c.at, end, ok, c.end, c.held)
		}
	}
	once := Schedule{Length: time.Second, First: 2 * time.Second, Once: true, Period: 3 * time.Second}
	if _, ok := once.StallEnd(5*time.Second + 500*time.Millisecond); ok {
		t.Error("a once-only schedule stalled a second time")
	}
}

func TestValidate(t *testing.T) {
	bad := []Schedule{
		{Length: -1},
		{Length: 5 * time.Second, Period: 5 * time.Second},
		{First: -time.Second},
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("Validate(%+v) accepted an impossible schedule", s)
		}
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.0.0.1:0", ":0"} {
		if err := New(Schedule{}).Start(addr); err == nil {
			t.Errorf("Start(%q) listened beyond loopback", addr)
		}
	}
}

// TestHeldDuringStall serves real requests on loopback in a synctest
// bubble, so the stall's length is exact virtual time.
func TestHeldDuringStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Schedule{Length: 500 * time.Millisecond, Period: 5 * time.Second, First: time.Second})
		s.start = time.Now()
		h := s.Handler()
		call := func() (time.Duration, string) {
			start := time.Now()
			rec := &recorder{header: http.Header{}}
			req, _ := http.NewRequest("GET", "/", nil)
			h.ServeHTTP(rec, req)
			return time.Since(start), rec.header.Get("X-Held-Us")
		}
		if d, _ := call(); d != 0 {
			t.Fatalf("request before the stall took %s", d)
		}
		time.Sleep(1200 * time.Millisecond)
		if d, held := call(); d != 300*time.Millisecond || held != "300000" {
			t.Fatalf("request 200ms into the stall took %s (held %s µs), want 300ms", d, held)
		}
		if d, _ := call(); d != 0 {
			t.Fatalf("request after the stall took %s", d)
		}
	})
}

// /delay/<ms> adds that much service after the stall's hold: in the
// stall the request waits for its end and then for its service, as at a
// frozen server that does work. A bad delay is a 400.
func TestDelayPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Schedule{Length: 500 * time.Millisecond, First: time.Second, Once: true})
		s.start = time.Now()
		h := s.Handler()
		call := func(path string) (time.Duration, int) {
			start := time.Now()
			rec := &recorder{header: http.Header{}}
			req, _ := http.NewRequest("GET", path, nil)
			h.ServeHTTP(rec, req)
			return time.Since(start), rec.code
		}
		if d, _ := call("/delay/10"); d != 10*time.Millisecond {
			t.Errorf("/delay/10 took %s, want 10ms", d)
		}
		if d, _ := call("/delay/2.5"); d != 2500*time.Microsecond {
			t.Errorf("/delay/2.5 took %s, want 2.5ms", d)
		}
		time.Sleep(time.Second - 12500*time.Microsecond + 2500*time.Microsecond)
		if d, _ := call("/delay/10"); d != 507500*time.Microsecond {
			t.Errorf("/delay/10 sent 2.5 ms into the freeze took %s, want 507.5ms", d)
		}
		for _, bad := range []string{"/delay/x", "/delay/-1", "/delay/60001"} {
			if _, code := call(bad); code != http.StatusBadRequest {
				t.Errorf("%s answered %d, want 400", bad, code)
			}
		}
	})
}

func TestServesOnLoopback(t *testing.T) {
	s := New(Schedule{})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(c int)           { r.code = c }
