package logsink

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseLoki(t *testing.T) {
	def := lokiDefaults()
	for _, tc := range []struct {
		in    string
		want  LokiOptions
		level Level
	}{
		{"loki", def, Info},
		{"loki=http://127.0.0.1:9/push", LokiOptions{Addr: "http://127.0.0.1:9/push", Limit: 100, PushPeriod: time.Second, MsgMaxSize: 1 << 20}, Info},
		{
			"loki=http://h/p,label.app=x,label.env=ci,header.X-Org=t1,limit=32,level=warning,pushPeriod=5m32s,msgMaxSize=1231,allowedLabels=[app,level]",
			LokiOptions{
				Addr: "http://h/p", Labels: [][2]string{{"app", "x"}, {"env", "ci"}}, Headers: [][2]string{{"X-Org", "t1"}},
				Limit: 32, PushPeriod: 5*time.Minute + 32*time.Second, MsgMaxSize: 1231, AllowedLabels: []string{"app", "level"},
			},
			Warn,
		},
	} {
		got, err := ParseOutput(tc.in)
		if err != nil || got.Kind != Loki || got.Loki == nil || !reflect.DeepEqual(*got.Loki, tc.want) || got.Level != tc.level {
			t.Errorf("ParseOutput(%q) = %+v (%+v), %v; want %+v at %v", tc.in, got, got.Loki, err, tc.want, tc.level)
		}
	}
	for in, names := range map[string]string{
		"lokix":                            "lokix",
		"loki=http://h/p,limit=0":          "limit",
		"loki=http://h/p,limit=x":          "limit",
		"loki=http://h/p,msgMaxSize=-1":    "msgMaxSize",
		"loki=http://h/p,pushPeriod=soon":  "pushPeriod",
		"loki=http://h/p,level=loud":       "level",
		"loki=http://h/p,colour=red":       "colour",
		"loki=http://h/p,limit":            "limit",
		"loki=http://h/p,allowedLabels=[a": "allowedLabels",
	} {
		_, err := ParseOutput(in)
		if err == nil || !strings.Contains(err.Error(), names) || !strings.Contains(err.Error(), "--log-output") || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("ParseOutput(%q) error %v; want one line naming --log-output and %s", in, err, names)
		}
	}
}

// lokiServer is a loopback Loki that records every push's body and
// answers with answer.
type lokiServer struct {
	mu     sync.Mutex
	bodies [][]byte
	header http.Header
}

func startLoki(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*lokiServer, string) {
	l := &lokiServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.bodies, l.header = append(l.bodies, b), r.Header
		l.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return l, srv.URL
}

// startHangingLoki starts a stand-in Loki that never answers a push: each
// waits until its client gives up or the test ends.
func startHangingLoki(t *testing.T) (*lokiServer, string) {
	release := make(chan struct{})
	l, url := startLoki(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	// Registered after the server's Close, so it runs first and lets
	// Close's wait for open pushes end.
	t.Cleanup(func() { close(release) })
	return l, url
}

func (l *lokiServer) pushes() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.bodies)
}

// pushBody is Loki's push format, as the test reads it.
type pushBody struct {
	Streams []struct {
		Stream map[string]string `json:"stream"`
		Values [][2]string       `json:"values"`
	} `json:"streams"`
}

func readPush(t *testing.T, b []byte) pushBody {
	t.Helper()
	var p pushBody
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("push body %s: %v", b, err)
	}
	return p
}

// replay writes the lines of a push k6 made, at their times, in time
// order, to a sink of --log-output=line pushing to url, closes it and
// returns what it pushed.
func replay(t *testing.T, k6 pushBody, line string, extra int) pushBody {
	t.Helper()
	l, url := startLoki(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	out, err := ParseOutput(strings.Replace(line, "URL", url, 1))
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		t     int64
		level Level
		msg   string
	}
	var entries []entry
	for _, s := range k6.Streams {
		if s.Stream["source"] != "console" {
			continue // k6's own "dropped" line
		}
		lvl, err := parseLevel(s.Stream["level"])
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s.Values {
			ns, _ := strconv.ParseInt(v[0], 10, 64)
			entries = append(entries, entry{ns, lvl, v[1]})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return int(a.t - b.t) })
	for i := range extra {
		entries = append(entries, entry{entries[len(entries)-1].t + int64(i+1), Info, "over the limit"})
	}
	var at time.Time
	s, err := New(out, Raw, nil, io.Discard, func() time.Time { return at }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		at = time.Unix(0, e.t)
		s.Line(e.level, e.msg, "console")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	pushes := l.pushes()
	if len(pushes) != 1 {
		t.Fatalf("%d pushes, want the one of Close", len(pushes))
	}
	if got := l.header.Get("X-Org"); strings.Contains(line, "X-Org") && got != "t1" {
		t.Errorf("header X-Org %q, want t1", got)
	}
	if ct := l.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return readPush(t, pushes[0])
}

// k6Push reads a body k6 v2.2.0 pushed to a recording Loki (the run of
// test/compat/corpus/460 and 461).
func k6Push(t *testing.T, name string) pushBody {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return readPush(t, b)
}

func TestLokiBodyIsK6s(t *testing.T) {
	k6 := k6Push(t, "k6-push.json")
	got := replay(t, k6, "loki=URL,label.app=x,header.X-Org=t1,pushPeriod=1m", 0)
	if !reflect.DeepEqual(got, k6) {
		t.Errorf("pushed\n%+v\nk6 pushed\n%+v", got, k6)
	}
}

func TestLokiLimitDropsAndSaysSo(t *testing.T) {
	k6 := k6Push(t, "k6-push-limit.json")
	// k6's run logged 8 lines; 3 went out and 5 were counted.
	got := replay(t, k6, "loki=URL,limit=3,pushPeriod=1s", 5)
	if !reflect.DeepEqual(got, k6) {
		t.Errorf("pushed\n%+v\nk6 pushed\n%+v", got, k6)
	}
}

func TestLokiLongLineAndAllowedLabels(t *testing.T) {
	l, url := startLoki(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	out, err := ParseOutput("loki=" + url + ",allowedLabels=[level],msgMaxSize=10")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := New(out, Raw, nil, io.Discard, nil, nil, nil)
	s.Line(Warn, "ünïcödé characters count as one", "console")
	s.Slog(-8).Info("from a module", "mod", "k6/x")
	s.Close()
	p := readPush(t, l.pushes()[0])
	// What k6 pushed for the first line in corpus 462; the second's
	// attribute becomes a label, which allowedLabels moves into the line.
	want := []string{
		"warning: ünïcö... omitting 36 characters ...nsole",
		"info: from ... omitting 12 characters ...=k6/x",
	}
	var got []string
	for _, st := range p.Streams {
		if len(st.Stream) != 1 {
			t.Errorf("labels %v, want level alone", st.Stream)
		}
		for _, v := range st.Values {
			got = append(got, st.Stream["level"]+": "+v[1])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

func TestLokiAnswering500IsOneErrorLine(t *testing.T) {
	l, url := startLoki(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "boom")
	})
	out, _ := ParseOutput("loki=" + url)
	var stderr bytes.Buffer
	s, _ := New(out, Text, nil, &stderr, nil, nil, strings.NewReplacer("hunter2", "***").Replace)
	s.Line(Info, "password hunter2", "console")
	s.Slog(0).Info("attribute", "token", "hunter2")
	s.Close()
	want := regexp.MustCompile(`^time="[^"]+" level=error msg="Error while sending logs to loki" error="got 500 from loki: boom"\n$`)
	if !want.MatchString(stderr.String()) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	p := l.pushes()
	if len(p) != 1 || !bytes.Contains(p[0], []byte(`"password ***"`)) || bytes.Contains(p[0], []byte("hunter2")) {
		t.Errorf("pushes %q, want one, without retry, with the secret hidden", p)
	}
}

func TestLokiThatHangsNeitherBlocksLinesNorTheEnd(t *testing.T) {
	l, url := startHangingLoki(t)
	const period = 200 * time.Millisecond
	out, _ := ParseOutput("loki=" + url + ",pushPeriod=200ms,limit=50")
	var stderr syncBuffer
	s, _ := New(out, Text, nil, &stderr, nil, nil, nil)
	// Lines keep coming over three periods while every push hangs: none
	// may wait for Loki, and the buffer holds at most limit of them.
	deadline := time.Now().Add(3 * period)
	n := 0
	for time.Now().Before(deadline) {
		s.Line(Info, "line", "console")
		n++
	}
	s.loki.mu.Lock()
	held := len(s.loki.batch)
	s.loki.mu.Unlock()
	if held > 50 {
		t.Errorf("%d lines buffered, more than the limit of 50", held)
	}
	start := time.Now()
	s.Close()
	// Close waits for the push in flight and makes the last one, each
	// cut off after one period; a second on top is the scheduling slack
	// of a loaded machine.
	if took := time.Since(start); took > 2*period+time.Second {
		t.Errorf("Close took %v with a Loki that hangs, more than two push periods", took)
	}
	if len(l.pushes()) == 0 || !strings.Contains(stderr.String(), "Client.Timeout exceeded") {
		t.Errorf("after %d lines: %d pushes, stderr %q; want timed-out pushes reported", n, len(l.pushes()), stderr.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the pusher's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestLokiThatHangsHoldsTheEndAtMostTheEndWait(t *testing.T) {
	_, url := startHangingLoki(t)
	// A push period of an hour would hold the end for an hour as in k6;
	// the last push waits endWait instead.
	out, _ := ParseOutput("loki=" + url + ",pushPeriod=1h")
	var stderr syncBuffer
	s, _ := New(out, Text, nil, &stderr, nil, nil, nil)
	if s.loki.endWait != maxEndWait {
		t.Errorf("end wait %v, want %v", s.loki.endWait, maxEndWait)
	}
	s.loki.endWait = 200 * time.Millisecond
	s.Line(Info, "line", "console")
	start := time.Now()
	s.Close()
	if took := time.Since(start); took > s.loki.endWait+time.Second {
		t.Errorf("Close took %v, more than the end wait of %v", took, s.loki.endWait)
	}
	if !strings.Contains(stderr.String(), "Client.Timeout exceeded") {
		t.Errorf("stderr %q, want the timed-out last push reported", stderr.String())
	}
}

func TestLokiPushInFlightAtTheEndIsCutAfterTheEndWait(t *testing.T) {
	l, url := startHangingLoki(t)
	const period = 2 * time.Second
	out, _ := ParseOutput("loki=" + url + ",pushPeriod=2s")
	s, _ := New(out, Text, nil, io.Discard, nil, nil, nil)
	s.loki.endWait = 100 * time.Millisecond
	s.Line(Info, "line", "console")
	// Wait for the first tick's push, which would hang for a whole period.
	for deadline := time.Now().Add(3 * period); len(l.pushes()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no push within three periods")
		}
	}
	s.Line(Info, "line", "console")
	start := time.Now()
	s.Close()
	if took, limit := time.Since(start), 2*s.loki.endWait+time.Second; took > limit {
		t.Errorf("Close took %v with a push in flight, more than %v", took, limit)
	}
}

// BenchmarkLokiLineOverLimit is the cost of a line once the period's limit
// is reached, the common case of a flood of lines.
func BenchmarkLokiLineOverLimit(b *testing.B) {
	out, _ := ParseOutput("loki=http://127.0.0.1:1/push,pushPeriod=1h,limit=1,label.app=x")
	s, _ := New(out, Raw, nil, io.Discard, nil, nil, nil)
	defer s.Close()
	s.Line(Info, "first", "console")
	b.ReportAllocs()
	for b.Loop() {
		s.Line(Info, "line", "console")
	}
}

func TestLokiLinePastTheLimitAllocatesNothing(t *testing.T) {
	out, _ := ParseOutput("loki=http://127.0.0.1:1/push,pushPeriod=1h,limit=1,label.app=x")
	s, _ := New(out, Raw, nil, io.Discard, nil, nil, nil)
	defer s.Close()
	s.Line(Info, "first", "console")
	if n := testing.AllocsPerRun(100, func() { s.Line(Info, "line", "console") }); n != 0 {
		t.Errorf("%v allocations per line past the limit, want 0", n)
	}
	if s.loki.dropped != 101 {
		t.Errorf("%d lines counted as dropped, want 101", s.loki.dropped)
	}
}

func TestLokiLargeLimitTakesMemoryOnlyForLines(t *testing.T) {
	out, err := ParseOutput("loki=http://127.0.0.1:1/push,limit=2000000000,pushPeriod=1h")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := New(out, Raw, nil, io.Discard, nil, nil, nil)
	if c := cap(s.loki.batch); c > batchCap {
		t.Errorf("the batch holds room for %d lines before any came", c)
	}
	s.Close()
}
