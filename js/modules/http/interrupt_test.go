package http_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"

	_ "github.com/metronome-load/metronome/js/modules/http"
	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// Requests cut off by the hard stop, as test/compat's
// 214-interrupted-http records k6 v2.2.0: a request answered before the
// stop is kept with all its samples, also when the VU records it after
// the stop (the first hop of a redirect, the answered request of a batch,
// an asyncRequest answered while the VU slept); one cut off records no
// http_* sample and is charged to corrected_latency with
// outcome=interrupted; the check, custom metric and group the script
// records after the stop are dropped, and the iteration is interrupted.
func TestRequestsCutOffByTheStop(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/fast", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "fast") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Minute):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/slow", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	cases := []struct {
		name, body string
		want       map[string]float64
	}{
		{"sync", `
			http.get(FAST, { tags: { name: "before" } });
			group("cut", () => {
				const r = http.get(SLOW, { tags: { name: "cut" } });
				check(r, { "after the stop": () => true });
				after.add(1);
			});
			after.add(1);`,
			map[string]float64{"http_reqs{name=before}": 1, "corrected_latency{name=before}": 1,
				"corrected_latency{name=cut,outcome=interrupted}": 1}},
		{"batch", `
			http.batch([["GET", FAST, null, { tags: { name: "fast" } }], ["GET", SLOW, null, { tags: { name: "cut" } }]]);
			after.add(1);`,
			map[string]float64{"http_reqs{name=fast}": 1, "corrected_latency{name=fast}": 1,
				"corrected_latency{name=cut,outcome=interrupted}": 1}},
		{"redirect", `
			http.get(REDIRECT, { tags: { name: "hops" } });
			after.add(1);`,
			map[string]float64{"http_reqs{name=hops}": 1, "corrected_latency{name=hops}": 1,
				"corrected_latency{name=hops,outcome=interrupted}": 1}},
		{"async while asleep", `
			http.asyncRequest("GET", FAST, null, { tags: { name: "answered" } }).then(() => after.add(1));
			http.asyncRequest("GET", SLOW, null, { tags: { name: "cut" } }).then(() => after.add(1));
			sleep(3600);
			after.add(1);`,
			map[string]float64{"http_reqs{name=answered}": 1, "corrected_latency{name=answered}": 1,
				"corrected_latency{name=cut,outcome=interrupted}": 1}},
		{"awaited", `
			const r = await http.asyncRequest("GET", SLOW, null, { tags: { name: "cut" } });
			check(r, { "after the stop": () => true });
			after.add(1);`,
			map[string]float64{"corrected_latency{name=cut,outcome=interrupted}": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := jstest.Load(t, map[string]string{"script.js": fmt.Sprintf(`
import http from "k6/http";
import { check, group, sleep } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
const FAST = %q, SLOW = %q, REDIRECT = %q;
export default async function () {%s
}`, srv.URL+"/fast", srv.URL+"/slow", srv.URL+"/redirect", c.body)}, nil)
			vu, rec := r.NewVU(t, 1)
			if res := jstest.RunCut(vu, 300*time.Millisecond); res.Outcome != executor.Interrupted {
				t.Errorf("outcome %v, want Interrupted", res.Outcome)
			}
			got := jstest.Tally(rec, "name", "outcome")
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			for k := range got {
				switch {
				case c.want[k] > 0:
				case k == "data_sent" || k == "data_received":
				case len(k) > 9 && k[:9] == "http_req_":
					// the other http_req_* trends of the kept requests
				default:
					t.Errorf("recorded %s = %v; k6 records nothing of it (all: %v)", k, got[k], got)
				}
			}
			if got["data_sent"] == 0 {
				t.Errorf("data_sent %v: the bytes of an interrupted iteration are still counted", got["data_sent"])
			}
		})
	}
}
