package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/metronome-load/metronome/internal/testkit/influxtest"
)

var updateK6Outputs = flag.Bool("update-k6-outputs", false,
	"re-run k6 with -o influxdb and experimental-opentelemetry and rewrite the testdata/outputs/*-k6.txt fixtures with what it wrote")

// influxFixture is what real k6 v2.2.0 wrote for testdata/outputs/metrics.js
// into an InfluxDB 1.6: the shape of its points (see pointShape).
const influxFixture = "testdata/outputs/influxdb-k6.txt"

// metronomeOnly are the measurements metronome writes and k6 does not.
var metronomeOnly = []string{"corrected_latency", "schedule_lag"}

// generatorHealth are the generator health metrics every metronome run
// records once a second, which k6 does not have either; the late shares
// only while an open-model scenario runs.
var generatorHealth = []string{"generator_cpu", "generator_sched_latency", "generator_gc_pause",
	"generator_late_wakeup", "generator_late_for_vu", "generator_limited"}

// lpRecorder is a reverse proxy in front of an InfluxDB that keeps the
// line protocol of every /write it forwards.
type lpRecorder struct {
	*httptest.Server
	mu    sync.Mutex
	lines []string
}

func newLPRecorder(t *testing.T, influx string) *lpRecorder {
	t.Helper()
	u, err := url.Parse(influx)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	r := &lpRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.URL.Path == "/write" {
			r.mu.Lock()
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if line := sc.Text(); line != "" {
					r.lines = append(r.lines, line)
				}
			}
			r.mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// shapes returns the distinct shapes of the recorded points, sorted.
func (r *lpRecorder) shapes(t *testing.T, target string) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	set := map[string]bool{}
	for _, l := range r.lines {
		s, err := pointShape(l, target)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// pointShape is a line-protocol point without its timestamp or numbers:
// the measurement, the tags (the target's address written as TARGET), and
// each field's name and type, with the value of string fields.
func pointShape(line, target string) (string, error) {
	dec := lineprotocol.NewDecoderWithBytes([]byte(line + "\n"))
	if !dec.Next() {
		return "", errors.New("no point")
	}
	m, err := dec.Measurement()
	if err != nil {
		return "", err
	}
	host := strings.TrimPrefix(target, "http://")
	norm := func(s string) string { return strings.ReplaceAll(s, host, "TARGET") }
	var b strings.Builder
	b.WriteString(string(m))
	for {
		k, v, err := dec.NextTag()
		if err != nil {
			return "", err
		}
		if k == nil {
			break
		}
		fmt.Fprintf(&b, ",%s=%s", k, norm(string(v)))
	}
	sep := " "
	for {
		k, v, err := dec.NextField()
		if err != nil {
			return "", err
		}
		if k == nil {
			break
		}
		fmt.Fprintf(&b, "%s%s:%s", sep, k, v.Kind())
		if v.Kind() == lineprotocol.String {
			fmt.Fprintf(&b, "=%q", norm(v.StringV()))
		}
		sep = ","
	}
	return b.String(), nil
}

// measurement is the measurement of a shape.
func measurement(shape string) string {
	return shape[:strings.IndexAny(shape, ", ")]
}

func readFixture(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// matchK6Fixture compares what k6 just did (got) with the fixture at path,
// or rewrites the fixture with it under -update-k6-outputs; what names
// the recording (output and script) for the fixture's header.
func matchK6Fixture(t *testing.T, path, what string, got []string) {
	t.Helper()
	if *updateK6Outputs {
		header := fmt.Sprintf("# The shapes of what k6 v2.2.0 wrote with %s\n# (written by go test ./test/e2e -run %s -update-k6-outputs).\n", what, t.Name())
		if err := os.WriteFile(path, []byte(header+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	if want := readFixture(t, path); !slices.Equal(got, want) {
		t.Errorf("k6 (%s) no longer does what %s records; re-record with -update-k6-outputs if that is k6's new behaviour.\ngot:\n%s",
			k6Binary(), path, strings.Join(got, "\n"))
	}
}

// TestInfluxDBOutput runs testdata/outputs/metrics.js with -o influxdb
// into a real InfluxDB 1.x and checks that metronome writes the points
// k6 v2.2.0 writes for the same script (recorded in influxFixture), plus
// corrected_latency and schedule_lag, and that the server stored them
// with the tag and field keys those points give. With K6_BINARY set, k6 is
// re-run the same way and must still match the fixture.
func TestInfluxDBOutput(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	// runInto runs the script into db and returns the shapes of the
	// points written and the number of requests the target answered.
	runInto := func(rn runner, db string) ([]string, int64) {
		tg := newTarget(t)
		rec := newLPRecorder(t, srv.URL)
		r := rn.run(t, runSpec{
			args: []string{"run", "-q", "-e", "TARGET=" + tg.URL, "-o", "influxdb=" + rec.URL + "/" + db, script("outputs/metrics.js")},
			env:  []string{"K6_INFLUXDB_PUSH_INTERVAL=200ms"},
		})
		if r.code != 0 {
			t.Fatalf("%s exited %d\nstderr:\n%s", rn.name, r.code, r.stderr)
		}
		if strings.Contains(strings.ToLower(r.stderr), "influx") {
			t.Errorf("%s warned about InfluxDB:\n%s", rn.name, r.stderr)
		}
		return rec.shapes(t, tg.URL), tg.requests.Load()
	}

	if k6Binary() != "" {
		got, _ := runInto(runner{"k6", runK6}, "k6")
		matchK6Fixture(t, influxFixture, "-o influxdb for metrics.js", got)
	}

	k6 := readFixture(t, influxFixture)
	got, requests := runInto(runner{"metronome", metronome}, "metronome")
	has := map[string]bool{}
	for _, s := range got {
		has[s] = true
	}
	for _, s := range k6 {
		if !has[s] {
			t.Errorf("metronome wrote no point shaped as k6's\n  %s", s)
		}
	}
	k6Measurements := map[string]bool{}
	for _, s := range k6 {
		k6Measurements[measurement(s)] = true
	}
	extra := map[string]bool{}
	for _, s := range got {
		if m := measurement(s); !k6Measurements[m] {
			extra[m] = true
			if !slices.Contains(metronomeOnly, m) && !slices.Contains(generatorHealth, m) {
				t.Errorf("metronome wrote a measurement k6 does not: %s", s)
			}
		} else if !slices.Contains(k6, s) {
			t.Errorf("metronome wrote a point k6 does not write:\n  %s", s)
		}
	}
	for _, m := range append(slices.Clone(metronomeOnly), "generator_limited") {
		if !extra[m] {
			t.Errorf("metronome wrote no %s points", m)
		}
	}
	if t.Failed() {
		t.Logf("metronome wrote:\n%s", strings.Join(got, "\n"))
	}

	// The server stored every point: the requests the target answered,
	// with the keys the shapes promise.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := srv.Query(ctx, "metronome", `SELECT count("value") FROM "http_reqs"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || fmt.Sprint(res[0].Values[0][1]) != fmt.Sprint(requests) {
		t.Errorf("stored http_reqs count %v, the target answered %d", res, requests)
	}
	shape, err := srv.Shape(ctx, "metronome")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		m := measurement(s)
		stored, ok := shape[m]
		if !ok {
			t.Errorf("the server has no measurement %s", m)
			continue
		}
		if !slices.Contains(stored.Fields, "value:float") {
			t.Errorf("%s: stored fields %v lack value:float", m, stored.Fields)
		}
	}
	if f := shape["http_req_duration"].Fields; !slices.Equal(f, []string{"url:string", "value:float"}) {
		t.Errorf("http_req_duration fields %v, want url:string and value:float (url written as a field, as in k6)", f)
	}
	if tags := shape["http_req_duration"].Tags; slices.Contains(tags, "url") || !slices.Contains(tags, "name") {
		t.Errorf("http_req_duration tags %v", tags)
	}
}
