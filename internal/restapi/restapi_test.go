package restapi_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/restapi"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
)

// fakeControl is a test run the API steers.
type fakeControl struct {
	mu       sync.Mutex
	status   restapi.Status
	observed []metrics.ObservedMetric
	elapsed  time.Duration
	groups   []string
	data     json.RawMessage
	stops    int
	// failure is RunTeardown's error.
	failure error
}

func (f *fakeControl) Status() restapi.Status { f.mu.Lock(); defer f.mu.Unlock(); return f.status }
func (f *fakeControl) Resume() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status.Paused = false
	return nil
}
func (f *fakeControl) Pause() error { return context.Canceled }
func (f *fakeControl) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	f.status.Stopped = true
}
func (f *fakeControl) Metrics() ([]metrics.ObservedMetric, time.Duration) {
	return f.observed, f.elapsed
}
func (f *fakeControl) Groups() []string               { return f.groups }
func (f *fakeControl) SetupData() json.RawMessage     { f.mu.Lock(); defer f.mu.Unlock(); return f.data }
func (f *fakeControl) SetSetupData(d json.RawMessage) { f.mu.Lock(); defer f.mu.Unlock(); f.data = d }
func (f *fakeControl) RunSetup(context.Context) (json.RawMessage, error) {
	f.SetSetupData(json.RawMessage(`{"a":1}`))
	return f.SetupData(), nil
}
func (f *fakeControl) RunTeardown(context.Context) error { return f.failure }

func serve(t *testing.T, c restapi.Control) string { return serveHiding(t, c, nil) }

func serveHiding(t *testing.T, c restapi.Control, hide *secrets.Store) string {
	t.Helper()
	ln, err := restapi.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := restapi.Serve(ln, c, hide)
	t.Cleanup(s.Close)
	return "http://" + s.Addr().String()
}

func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// The bodies below are what k6 v2.2.0 answered (curl on loopback) for a
// paused run of one constant-vus VU and, after resuming, for its
// iterations counter and an unknown metric.
func TestK6Envelopes(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	it := &metrics.CounterSink{}
	it.Add(metrics.Sample{Metric: b.Iterations, Value: 1, Time: time.Unix(0, 0)})
	f := &fakeControl{
		status:   restapi.Status{Status: restapi.StatusPausedBeforeRun, Paused: true, VUsMax: 1},
		observed: []metrics.ObservedMetric{{Name: "iterations", Metric: b.Iterations, Sink: it}},
		elapsed:  2 * time.Second,
	}
	u := serve(t, f)
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/status", "", 200,
			`{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":true,"vus":0,"vus-max":1,"stopped":false,"running":false,"tainted":false}}}`},
		{"GET", "/v1/groups", "", 200,
			`{"data":[{"type":"groups","id":"d41d8cd98f00b204e9800998ecf8427e","attributes":{"path":"","name":"","checks":null},"relationships":{"groups":{"data":[]},"parent":{"data":null}}}]}`},
		{"GET", "/v1/setup", "", 200, `{"data":{"type":"setupData","id":"default","attributes":{}}}`},
		{"PATCH", "/v1/status", `{"data":{"attributes":{"paused":false,"stopped":false},"id":"default","type":"status"}}`, 200,
			`{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":false,"vus":0,"vus-max":1,"stopped":false,"running":false,"tainted":false}}}`},
		{"GET", "/v1/metrics/iterations", "", 200,
			`{"data":{"type":"metrics","id":"iterations","attributes":{"type":"counter","contains":"default","tainted":null,"sample":{"count":1,"rate":0.5}}}}`},
		{"GET", "/v1/metrics/nope", "", 404,
			`{"errors":[{"status":"404","title":"Not Found","detail":"No metric with that ID was found"}]}`},
		{"PUT", "/v1/setup", `{"b":2}`, 200, `{"data":{"type":"setupData","id":"default","attributes":{"data":{"b":2}}}}`},
		{"GET", "/v1/setup", "", 200, `{"data":{"type":"setupData","id":"default","attributes":{"data":{"b":2}}}}`},
		{"POST", "/v1/setup", "", 200, `{"data":{"type":"setupData","id":"default","attributes":{"data":{"a":1}}}}`},
		{"PATCH", "/v1/status", `{"data":{"attributes":{"vus":3}}}`, 400,
			`{"errors":[{"status":"400","title":"Bad Request","detail":"live VU configuration updates are not supported"}]}`},
		{"PATCH", "/v1/status", `{"data":{"attributes":{"stopped":true}}}`, 200,
			`{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":false,"vus":0,"vus-max":1,"stopped":true,"running":false,"tainted":false}}}`},
	}
	for _, c := range cases {
		code, got := call(t, c.method, u+c.path, c.body)
		if code != c.code || got != c.want {
			t.Errorf("%s %s: %d %s\nwant %d %s", c.method, c.path, code, got, c.code, c.want)
		}
	}
	if f.stops != 1 {
		t.Errorf("Stop called %d times, want 1", f.stops)
	}
}

func TestGroupTree(t *testing.T) {
	u := serve(t, &fakeControl{groups: []string{"::a", "::a::b"}})
	_, body := call(t, "GET", u+"/v1/groups", "")
	var got struct {
		Data []struct {
			ID         string `json:"id"`
			Attributes struct {
				Path, Name string
			} `json:"attributes"`
			Relationships struct {
				Groups struct{ Data []struct{ ID string } }
				Parent struct{ Data *struct{ ID string } }
			} `json:"relationships"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Data) != 3 {
		t.Fatalf("%s: %v", body, err)
	}
	root, a, ab := got.Data[0], got.Data[1], got.Data[2]
	if a.Attributes.Name != "a" || ab.Attributes.Name != "b" || ab.Attributes.Path != "::a::b" {
		t.Errorf("names %+v", got.Data)
	}
	if len(root.Relationships.Groups.Data) != 1 || root.Relationships.Groups.Data[0].ID != a.ID ||
		ab.Relationships.Parent.Data == nil || ab.Relationships.Parent.Data.ID != a.ID {
		t.Errorf("tree links wrong: %s", body)
	}
	if code, _ := call(t, "GET", u+"/v1/groups/"+ab.ID, ""); code != 200 {
		t.Errorf("GET /v1/groups/{id}: %d", code)
	}
}

// A fetched secret in a metric's name, a group's name, the setup data or
// an error's detail is masked in every answer, and the metric is found by
// the id listed but not by its name in clear; a group's id is the digest
// of the masked path.
func TestSecretsHiddenInAnswers(t *testing.T) {
	const secret = "tok3n+Zq9/x=y&<z>"
	path := filepath.Join(t.TempDir(), "secrets.txt")
	if err := os.WriteFile(path, []byte("k="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hide, err := secrets.Parse([]string{"file=" + path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hide.Get(secrets.DefaultName, "k"); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewRegistry()
	m := reg.MustNew("tok3n", metrics.Counter, metrics.Default)
	f := &fakeControl{
		observed: []metrics.ObservedMetric{{Name: "tok3n{k:" + secret + "}", Metric: m, Sink: &metrics.CounterSink{}}},
		groups:   []string{"::g " + secret},
		data:     json.RawMessage(`{"token":` + strconv.Quote(secret) + `}`),
		failure:  errors.New("teardown " + secret),
	}
	u := serveHiding(t, f, hide)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/metrics"}, {"GET", "/v1/metrics/tok3n%7Bk:" + secrets.Mask + "%7D"},
		{"GET", "/v1/groups"}, {"GET", "/v1/groups/" + groupID("::g "+secrets.Mask)},
		{"GET", "/v1/setup"}, {"POST", "/v1/teardown"},
	} {
		code, body := call(t, c.method, u+c.path, "")
		if code == http.StatusNotFound || strings.Contains(body, "Zq9") || !strings.Contains(body, secrets.Mask) {
			t.Errorf("%s %s: %d, shows the secret or not the mask:\n%s", c.method, c.path, code, body)
		}
	}
	if code, body := call(t, "GET", u+"/v1/metrics/"+url.PathEscape("tok3n{k:"+secret+"}"), ""); code != http.StatusNotFound {
		t.Errorf("the metric is found by its secret: %d %s", code, body)
	}
}

// groupID is k6's group id, the hex MD5 of the path.
func groupID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}
