package browser

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/metronome-load/metronome/metrics"
)

// Metrics are the browser_* metrics with k6's names, types and units.
type Metrics struct {
	DataSent, DataReceived *metrics.Metric
	ReqDuration, ReqFailed *metrics.Metric
	// Vitals by the web-vitals name: LCP, FCP, CLS, INP, TTFB.
	Vitals map[string]*metrics.Metric
}

// Define defines the browser metrics in r, or returns the existing ones.
func Define(r *metrics.Registry) (*Metrics, error) {
	m := &Metrics{Vitals: map[string]*metrics.Metric{}}
	if err := r.NewAll(
		metrics.Def{To: &m.DataSent, Name: "browser_data_sent", Type: metrics.Counter, Contains: metrics.Data},
		metrics.Def{To: &m.DataReceived, Name: "browser_data_received", Type: metrics.Counter, Contains: metrics.Data},
		metrics.Def{To: &m.ReqDuration, Name: "browser_http_req_duration", Type: metrics.Trend, Contains: metrics.Time},
		metrics.Def{To: &m.ReqFailed, Name: "browser_http_req_failed", Type: metrics.Rate, Contains: metrics.Default},
	); err != nil {
		return nil, err
	}
	for _, v := range []string{"LCP", "FCP", "CLS", "INP", "TTFB"} {
		vt := metrics.Time
		if v == "CLS" {
			// CLS is a score, not a time.
			vt = metrics.Default
		}
		mm, err := r.New("browser_web_vital_"+strings.ToLower(v), metrics.Trend, vt)
		if err != nil {
			return nil, err
		}
		m.Vitals[v] = mm
	}
	return m, nil
}

// request is what the page's network events told about one request.
type request struct {
	method, url, resourceType string
	wall                      time.Time
	start                     float64 // monotonic seconds
	resp                      *network.Response
	// sent is the request's size as k6 counts it: its request line, the
	// headers that went on the wire (those of requestWillBeSentExtraInfo
	// once they came, else those Chromium planned) and its body.
	lineBody, headers float64
	extra             bool
}

// netTracker turns a page's CDP network events into browser_* samples.
// Its methods run on the goroutine that reads the page's events; they
// record through send, which must not block that goroutine.
type netTracker struct {
	m    *Metrics
	tags func() (*metrics.TagSet, map[string]bool)
	send func([]metrics.Sample)

	mu       sync.Mutex
	reqs     map[network.RequestID]*request
	extra    map[network.RequestID]network.Headers // wire headers come before their request
	inflight int
	lastIdle time.Time
}

func newNetTracker(m *Metrics, tags func() (*metrics.TagSet, map[string]bool), send func([]metrics.Sample)) *netTracker {
	return &netTracker{m: m, tags: tags, send: send, reqs: map[network.RequestID]*request{}, extra: map[network.RequestID]network.Headers{}, lastIdle: time.Now()}
}

// idleSince reports how long no request has been in flight (0 while one
// is).
func (n *netTracker) idleSince() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inflight > 0 {
		return 0
	}
	return time.Since(n.lastIdle)
}

// requestLineSize is the size k6 counts for a request line: method,
// path, HTTP version, spaces and line break.
func requestLineSize(method, rawURL string) int {
	path := rawURL
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		} else {
			path = ""
		}
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return 4 + len(method) + len(path) + 8
}

// headersSize is the size k6 counts for headers: name, value, ": " and a
// line break each.
func headersSize(h network.Headers) int {
	size := 0
	for k, v := range h {
		s, ok := v.(string)
		if !ok {
			continue
		}
		// Repeated headers come joined by line breaks.
		for _, one := range strings.Split(s, "\n") {
			size += len(k) + len(one) + 4
		}
	}
	return size
}

func (n *netTracker) onRequest(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil {
		return
	}
	n.mu.Lock()
	if prev, ok := n.reqs[ev.RequestID]; ok && ev.RedirectResponse != nil {
		// A redirect ends the request under this id and starts another.
		prev.resp = ev.RedirectResponse
		n.mu.Unlock()
		n.finish(prev, float64(ev.Timestamp), prev.resp.EncodedDataLength, true)
		n.mu.Lock()
		n.inflight--
	}
	r := &request{method: ev.Request.Method, url: ev.Request.URL + ev.Request.URLFragment,
		resourceType: string(ev.Type), wall: time.Now(), start: float64(ev.Timestamp)}
	body := 0
	for _, e := range ev.Request.PostDataEntries {
		body += len(e.Bytes)
	}
	r.lineBody = float64(requestLineSize(r.method, r.url) + body)
	if x, ok := n.extra[ev.RequestID]; ok {
		r.headers, r.extra = float64(headersSize(x)), true
		delete(n.extra, ev.RequestID)
	} else {
		r.headers = float64(headersSize(ev.Request.Headers))
	}
	n.reqs[ev.RequestID] = r
	n.inflight++
	n.mu.Unlock()
}

// onExtraInfo takes the headers a request sent on the wire; they may come
// before or after the request's own event.
func (n *netTracker) onExtraInfo(ev *network.EventRequestWillBeSentExtraInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.reqs[ev.RequestID]
	switch {
	case ok && !r.extra:
		r.headers, r.extra = float64(headersSize(ev.Headers)), true
	case !ok:
		n.extra[ev.RequestID] = ev.Headers
	}
}

func (n *netTracker) onResponse(ev *network.EventResponseReceived) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.reqs[ev.RequestID]; ok {
		r.resp = ev.Response
	}
}

func (n *netTracker) onEnd(id network.RequestID, ts float64, received float64) {
	n.mu.Lock()
	r, ok := n.reqs[id]
	if ok {
		delete(n.reqs, id)
		n.inflight--
		if n.inflight == 0 {
			n.lastIdle = time.Now()
		}
	}
	n.mu.Unlock()
	if ok {
		n.finish(r, ts, received, r.resp != nil)
	}
}

// responseTags are the tags of a response's samples, as k6 sets them.
func responseTags(base *metrics.TagSet, sys map[string]bool, method, url, resourceType string, resp *network.Response) *metrics.TagSet {
	var status int64
	var ip, proto string
	var fromCache, fromPrefetch, fromSW bool
	if resp != nil {
		status, ip, proto = resp.Status, resp.RemoteIPAddress, resp.Protocol
		fromCache, fromPrefetch, fromSW = resp.FromDiskCache, resp.FromPrefetchCache, resp.FromServiceWorker
		url = resp.URL
	}
	tags := base
	if sys["method"] {
		tags = tags.With("method", method)
	}
	if sys["url"] {
		tags = tags.With("url", url).With("name", url)
	}
	if sys["ip"] {
		tags = tags.With("ip", ip)
	}
	if sys["status"] {
		tags = tags.With("status", strconv.FormatInt(status, 10))
	}
	if sys["proto"] {
		tags = tags.With("proto", proto)
	}
	return tags.With("from_cache", strconv.FormatBool(fromCache)).
		With("from_prefetch_cache", strconv.FormatBool(fromPrefetch)).
		With("from_service_worker", strconv.FormatBool(fromSW)).
		With("resource_type", resourceType)
}

// finish records a request's duration, its received bytes and, when it
// was answered, whether it failed (a status outside 200–399), as k6 does.
func (n *netTracker) finish(r *request, endTS, received float64, answered bool) {
	base, sys := n.tags()
	sentTags := base
	if sys["method"] {
		sentTags = sentTags.With("method", r.method)
	}
	if sys["url"] {
		sentTags = sentTags.With("url", r.url).With("name", r.url)
	}
	sentTags = sentTags.With("resource_type", r.resourceType)
	tags := responseTags(base, sys, r.method, r.url, r.resourceType, r.resp)
	d := time.Duration((endTS - r.start) * float64(time.Second))
	if d < 0 {
		d = 0
	}
	end := r.wall.Add(d)
	batch := []metrics.Sample{
		{Metric: n.m.DataSent, Tags: sentTags, Time: r.wall, Value: r.lineBody + r.headers},
		{Metric: n.m.ReqDuration, Tags: tags, Time: end, Value: metrics.Milliseconds(d)},
		{Metric: n.m.DataReceived, Tags: tags, Time: end, Value: received},
	}
	if answered {
		failed := 0.0
		if s := r.resp.Status; s < 200 || s > 399 {
			failed = 1
		}
		batch = append(batch, metrics.Sample{Metric: n.m.ReqFailed, Tags: tags, Time: end, Value: failed})
	}
	n.send(batch)
}

// vital is what the in-page collector reports.
type vital struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Rating string  `json:"rating"`
	URL    string  `json:"url"`
}

func (n *netTracker) onVital(payload string) {
	var v vital
	if err := json.Unmarshal([]byte(payload), &v); err != nil {
		return
	}
	m, ok := n.m.Vitals[v.Name]
	if !ok {
		return
	}
	base, sys := n.tags()
	tags := base
	if sys["url"] {
		tags = tags.With("url", v.URL).With("name", v.URL)
	}
	tags = tags.With("rating", v.Rating)
	n.send([]metrics.Sample{{Metric: m, Tags: tags, Time: time.Now(), Value: v.Value}})
}
