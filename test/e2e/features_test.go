package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// rwReceiver is a loopback Prometheus remote-write endpoint that counts
// the native histograms and the plain samples it is sent.
type rwReceiver struct {
	*httptest.Server
	mu                  sync.Mutex
	histograms, samples int
	histogramNames      map[string]bool
}

func newRWReceiver(t *testing.T) *rwReceiver {
	t.Helper()
	rw := &rwReceiver{histogramNames: map[string]bool{}}
	rw.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			body, err = snappy.Decode(nil, body)
		}
		var req prompb.WriteRequest
		if err == nil {
			err = req.Unmarshal(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rw.mu.Lock()
		for _, ts := range req.Timeseries {
			rw.samples += len(ts.Samples)
			rw.histograms += len(ts.Histograms)
			if len(ts.Histograms) > 0 {
				for _, l := range ts.Labels {
					if l.Name == "__name__" {
						rw.histogramNames[l.Value] = true
					}
				}
			}
		}
		rw.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rw.Close)
	return rw
}

// k6 v2's feature flag native-histograms, from --features, K6_FEATURES or
// the legacy variable, switches the remote-write output to native
// histograms (k6 v2.2.0 logs "Experimental feature enabled" for each and
// a deprecation warning for the legacy variable; recorded 2026-12-01).
// Without it, trends go as stat gauges and no histogram is sent. An
// unknown flag is reported and the run goes on, as in k6.
func TestFeatureNativeHistograms(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	for _, tc := range []struct {
		name       string
		args, env  []string
		histograms bool
		says       string
	}{
		{"off", nil, nil, false, ""},
		{"flag", []string{"--features", "native-histograms"}, nil, true, "experimental feature enabled: native-histograms"},
		{"env", nil, []string{"K6_FEATURES=native-histograms"}, true, "experimental feature enabled: native-histograms"},
		{"legacy variable", nil, []string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true"}, true, "legacy switch"},
		{"unknown flag", []string{"--features", "bogus"}, nil, false, `unknown feature flag "bogus"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rw := newRWReceiver(t)
			args := append([]string{"run", "-o", "experimental-prometheus-rw", "-e", "TARGET=" + tg.URL}, tc.args...)
			args = append(args, script("outputs/load.js"))
			r := metronome(t, runSpec{args: args, env: append([]string{"K6_PROMETHEUS_RW_SERVER_URL=" + rw.URL + "/api/v1/write"}, tc.env...)})
			if r.code != 0 {
				t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
			}
			if tc.says != "" && !strings.Contains(r.stderr, tc.says) {
				t.Errorf("stderr does not say %q:\n%s", tc.says, r.stderr)
			}
			rw.mu.Lock()
			defer rw.mu.Unlock()
			if rw.samples == 0 {
				t.Fatalf("the receiver got no samples")
			}
			if got := rw.histograms > 0; got != tc.histograms {
				t.Errorf("native histograms sent: %d; want some: %v", rw.histograms, tc.histograms)
			}
			if tc.histograms && !rw.histogramNames["k6_http_req_duration_seconds"] {
				t.Errorf("histograms of %v, want k6_http_req_duration_seconds among them", rw.histogramNames)
			}
		})
	}
}
