// Package influxdb is the InfluxDB 1.x output (-o influxdb=URL). It is
// configured with k6's K6_INFLUXDB_* variables and URL options and writes
// what k6 writes, so that dashboards built on k6's InfluxDB data work
// unchanged:
//
//   - one point per sample, in the measurement named after the metric
//     (http_req_duration, checks, corrected_latency, schedule_lag, ...);
//   - the sample's tags as tags (empty values left out), except those in
//     TAGS_AS_FIELDS (default vu, iter, url), which become fields, typed
//     as the option says;
//   - the sample's value in the float field "value", in k6's units
//     (milliseconds for time metrics);
//   - the sample's time, at nanosecond precision unless PRECISION says
//     otherwise.
//
// Metadata (vu and iter when enabled) is not written, as in k6.
//
// The output never slows the test down: AddSamples only hands the batch to
// the output's goroutine, which encodes the samples as line protocol;
// every PUSH_INTERVAL the encoded points go to a bounded queue that
// CONCURRENT_WRITES senders write from. When the server does not keep up,
// the oldest queued writes are dropped; every point lost is counted and
// reported at Stop, which returns within stopTimeout whatever the server
// does.
package influxdb

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// Name is the name under which the output is registered.
const Name = "influxdb"

func init() { output.Register(Name, New) }

// Limits of the output's buffers and of its stop.
const (
	// inputBuffer is how many batches may wait for the encoder.
	inputBuffer = 1024
	// maxWriteBytes cuts a write before the push interval when the points
	// encoded since the last one reach it (InfluxDB's advice: 5,000 to
	// 10,000 points per write).
	maxWriteBytes = 2 << 20
	// queueBytes bounds the encoded points waiting for the senders.
	queueBytes = 64 << 20
	// requestTimeout bounds one write.
	requestTimeout = 5 * time.Second
	// attempts is how often a write that failed on the network or a 5xx
	// is tried.
	attempts = 3
	// stopTimeout is how long Stop lets the senders write what is queued.
	stopTimeout = 10 * time.Second
)

// Output is the InfluxDB output.
type Output struct {
	cfg     Config
	secrets []string
	kinds   map[string]fieldKind
	logf    func(format string, args ...any)
	now     func() time.Time
	// transport replaces the HTTP transport in tests; nil for a real one.
	transport http.RoundTripper
	write     func(ctx context.Context, body []byte) error
	// closeWriter releases the UDP socket; nil for HTTP.
	closeWriter func() error

	loop  *output.Loop
	queue *output.Queue[[]byte]

	// Owned by the loop's goroutine.
	enc     lineprotocol.Encoder
	points  int
	lines   map[*metrics.TagSet]*lineParts
	skipped int
	skipErr error

	// stopCtx ends the writes stopTimeout after Stop begins.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	sendersWG  sync.WaitGroup

	// Counted by the senders.
	writes, failedWrites, failedPoints atomic.Int64
	firstErr                           atomic.Pointer[error]
}

// New builds the output from the K6_INFLUXDB_* variables in p.Env and the
// URL in p.Arg.
func New(p output.Params) (output.Output, error) {
	return newOutput(p, nil)
}

func newOutput(p output.Params, transport http.RoundTripper) (*Output, error) {
	cfg, err := ParseConfig(p.Env, p.Arg)
	if err != nil {
		return nil, errors.New(output.Redact(err.Error(), cfg.secrets()...))
	}
	kinds, err := cfg.fieldKinds()
	if err != nil {
		return nil, err
	}
	prec, err := cfg.precision()
	if err != nil {
		return nil, err
	}
	o := &Output{
		cfg:       cfg,
		secrets:   cfg.secrets(),
		kinds:     kinds,
		now:       p.Now,
		transport: transport,
		lines:     map[*metrics.TagSet]*lineParts{},
		queue:     output.NewQueue[[]byte](queueBytes),
	}
	if o.now == nil {
		o.now = time.Now
	}
	logf := p.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	o.logf = func(format string, args ...any) {
		logf("%s", output.Redact(fmt.Sprintf(format, args...), o.secrets...))
	}
	o.enc.SetPrecision(prec)
	o.loop = output.NewLoop(inputBuffer, cfg.PushInterval, output.LoopSteps{
		Ingest: o.ingest,
		Tick:   func() { o.flush(false) },
		Final:  o.final,
	})
	return o, nil
}

// Description is shown in the banner, as k6 shows it.
func (o *Output) Description() string {
	return fmt.Sprintf("InfluxDBv1 (%s)", output.Redact(o.cfg.Addr, o.secrets...))
}

// Start creates the database if it can, in the background, and starts the
// encoder and the senders.
func (o *Output) Start() error {
	o.stopCtx, o.cancelStop = context.WithCancel(context.Background())
	var create func(context.Context) error
	if strings.HasPrefix(o.cfg.Addr, "udp://") {
		w, err := newUDPWriter(o.cfg)
		if err != nil {
			return errors.New(output.Redact(fmt.Sprintf("%s: %v", envAddr, err), o.secrets...))
		}
		o.write, o.closeWriter = w.write, w.conn.Close
	} else {
		h, err := o.newHTTPWriter()
		if err != nil {
			return err
		}
		o.write, create = h.write, h.createDatabase
	}
	o.loop.Start()
	o.sendersWG.Add(o.cfg.ConcurrentWrites)
	go func() {
		if create != nil {
			// As in k6: failing is usually harmless (the database exists
			// and the user may not create one); a real problem shows in
			// the writes.
			ctx, cancel := context.WithTimeout(o.stopCtx, requestTimeout)
			_ = create(ctx)
			cancel()
		}
		for range o.cfg.ConcurrentWrites {
			go o.send()
		}
	}()
	return nil
}

// AddSamples hands the batch to the encoder without waiting; when the
// encoder is that far behind, the batch is counted as dropped.
func (o *Output) AddSamples(batch []metrics.Sample) { o.loop.AddSamples(batch) }

// Stop writes what is left, within stopTimeout, and reports what was lost.
// It returns an error when samples never reached the encoder.
func (o *Output) Stop() error {
	return o.loop.Stop(0, func(bool) error {
		timer := time.AfterFunc(stopTimeout, o.cancelStop)
		o.sendersWG.Wait()
		timer.Stop()
		o.cancelStop()
		if o.closeWriter != nil {
			_ = o.closeWriter()
		}
		o.report()
		if n := o.loop.Dropped(); n > 0 {
			return fmt.Errorf("influxdb: %d samples were dropped because the output's buffer was full; they were not written", n)
		}
		return nil
	})
}

// report logs every point the server did not get.
func (o *Output) report() {
	if o.skipped > 0 {
		o.logf("influxdb: %d samples could not be written as line protocol; the first: %v", o.skipped, o.skipErr)
	}
	if writes, points := o.queue.Dropped(); writes > 0 {
		o.logf("influxdb: %d writes (%d points) were dropped because the server did not keep up", writes, points)
	}
	if n := o.failedWrites.Load(); n > 0 {
		o.logf("influxdb: %d of %d writes (%d points) were not written to %s; first error: %v",
			n, o.writes.Load(), o.failedPoints.Load(), o.Description(), *o.firstErr.Load())
	}
}

// lineParts is what a tag set contributes to a line: the tags, and the
// fields that sort before and after "value".
type lineParts struct {
	tags          []tag
	before, after []field
}

type tag struct{ k, v string }

type field struct {
	k string
	v lineprotocol.Value
}

// partsFor splits tags into tags and fields, once per tag set.
func (o *Output) partsFor(tags *metrics.TagSet) *lineParts {
	if p, ok := o.lines[tags]; ok {
		return p
	}
	p := &lineParts{}
	tags.Range(func(k, v string) bool {
		kind, asField := o.kinds[k]
		switch {
		case v == "":
			// Neither k6 nor InfluxDB keeps empty tags.
		case !asField:
			p.tags = append(p.tags, tag{k, v})
		case k == "value":
			// The sample's value wins, as in k6.
		case k < "value":
			p.before = append(p.before, field{k, fieldValue(kind, v)})
		default:
			p.after = append(p.after, field{k, fieldValue(kind, v)})
		}
		return true
	})
	o.lines[tags] = p
	return p
}

// fieldValue types a tag's value as a field; a value that does not parse
// as the type stays a string, as in k6.
func fieldValue(kind fieldKind, s string) lineprotocol.Value {
	switch kind {
	case intField:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return lineprotocol.IntValue(n)
		}
	case floatField:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if v, ok := lineprotocol.FloatValue(f); ok {
				return v
			}
		}
	case boolField:
		if b, err := strconv.ParseBool(s); err == nil {
			return lineprotocol.BoolValue(b)
		}
	}
	if v, ok := lineprotocol.StringValue(s); ok {
		return v
	}
	return lineprotocol.MustNewValue(strings.ToValidUTF8(s, "\uFFFD"))
}

// ingest encodes a batch as line protocol.
func (o *Output) ingest(batch []metrics.Sample) {
	var now time.Time
	for i := range batch {
		smp := &batch[i]
		if smp.Metric == nil {
			continue
		}
		value, ok := lineprotocol.FloatValue(smp.Value)
		if !ok {
			o.skip(fmt.Errorf("%s: the value %v", smp.Metric.Name, smp.Value))
			continue
		}
		tags := smp.Tags
		if tags == nil {
			tags = metrics.EmptyTags
		}
		p := o.partsFor(tags)
		at := smp.Time
		if at.IsZero() {
			if now.IsZero() {
				now = o.now()
			}
			at = now
		}
		o.enc.StartLine(smp.Metric.Name)
		for _, t := range p.tags {
			o.enc.AddTag(t.k, t.v)
		}
		for _, f := range p.before {
			o.enc.AddField(f.k, f.v)
		}
		o.enc.AddField("value", value)
		for _, f := range p.after {
			o.enc.AddField(f.k, f.v)
		}
		o.enc.EndLine(at)
		if err := o.enc.Err(); err != nil {
			// The encoder dropped the line.
			o.skip(err)
			o.enc.ClearErr()
			continue
		}
		o.points++
		if len(o.enc.Bytes()) >= maxWriteBytes {
			o.flush(false)
		}
	}
}

func (o *Output) skip(err error) {
	if o.skipped == 0 {
		o.skipErr = err
	}
	o.skipped++
}

// flush queues the points encoded since the last flush as one write.
func (o *Output) flush(final bool) {
	if o.points == 0 {
		return
	}
	body := o.enc.Bytes()
	o.queue.Push(body, len(body), o.points, final)
	o.points = 0
	o.enc.SetBuffer(make([]byte, 0, min(2*len(body), maxWriteBytes+64<<10)))
}

// final queues the last write after the loop took every queued batch; the
// senders end once the queue is empty.
func (o *Output) final() {
	o.flush(true)
	o.queue.Close()
}

// send writes queued points until the queue is closed and empty. After
// stopTimeout, what is left is counted as lost without being tried.
func (o *Output) send() {
	defer o.sendersWG.Done()
	for {
		body, points, ok := o.queue.Pop()
		if !ok {
			return
		}
		o.writes.Add(1)
		err := o.stopCtx.Err()
		if err != nil {
			err = fmt.Errorf("stopped before the write could be sent: %w", err)
		} else {
			err = o.writeWithRetries(body)
		}
		if err != nil {
			o.failedWrites.Add(1)
			o.failedPoints.Add(int64(points))
			if o.firstErr.CompareAndSwap(nil, &err) {
				o.logf("influxdb: a write to %s failed, later failures are counted and reported at the end: %v", o.Description(), err)
			}
		}
	}
}

// writeWithRetries tries a write up to attempts times, with backoff, while
// the failure is one a retry can mend.
func (o *Output) writeWithRetries(body []byte) error {
	backoff := 250 * time.Millisecond
	for i := 1; ; i++ {
		ctx, cancel := context.WithTimeout(o.stopCtx, requestTimeout)
		err := o.write(ctx, body)
		cancel()
		var perm *permanentError
		if err == nil || errors.As(err, &perm) || i == attempts {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-o.stopCtx.Done():
			t.Stop()
			return err
		}
		backoff *= 2
	}
}

// permanentError is a server's answer that a retry would not change (a
// 4xx: bad points, no such database, no access).
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// httpWriter writes to InfluxDB's /write endpoint.
type httpWriter struct {
	client           *http.Client
	writeURL, query  string
	db               string
	username, passwd string
}

func (o *Output) newHTTPWriter() (*httpWriter, error) {
	t := o.transport
	if t == nil {
		ht := http.DefaultTransport.(*http.Transport).Clone()
		if o.cfg.Insecure {
			ht.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
		}
		if o.cfg.Proxy != "" {
			p, err := url.Parse(o.cfg.Proxy)
			if err != nil {
				return nil, errors.New(output.Redact(fmt.Sprintf("%s: %v", envProxy, err), o.secrets...))
			}
			ht.Proxy = http.ProxyURL(p)
		}
		t = ht
	}
	// The parameters k6's client sends, empty ones included.
	q := url.Values{
		"db":          {o.cfg.DB},
		"rp":          {o.cfg.Retention},
		"precision":   {o.cfg.precisionParam()},
		"consistency": {o.cfg.Consistency},
	}
	base := strings.TrimSuffix(o.cfg.Addr, "/")
	return &httpWriter{
		client:   &http.Client{Transport: t},
		writeURL: base + "/write?" + q.Encode(),
		query:    base + "/query",
		db:       o.cfg.DB,
		username: o.cfg.Username,
		passwd:   o.cfg.Password,
	}, nil
}

func (h *httpWriter) do(ctx context.Context, u, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	if h.username != "" {
		req.SetBasicAuth(h.username, h.passwd)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	text := strings.TrimSpace(string(msg))
	if json.Unmarshal(msg, &e) == nil && e.Error != "" {
		text = e.Error
	}
	err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, text)
	if resp.StatusCode == http.StatusUnauthorized {
		err = fmt.Errorf("%w (set K6_INFLUXDB_USERNAME and K6_INFLUXDB_PASSWORD; this output speaks InfluxDB 1.x, whose /write InfluxDB 2 serves only with a v1 authorization)", err)
	}
	if resp.StatusCode/100 == 4 {
		return &permanentError{err.Error()}
	}
	return err
}

func (h *httpWriter) write(ctx context.Context, body []byte) error {
	return h.do(ctx, h.writeURL, "text/plain; charset=utf-8", body)
}

// createDatabase creates the database, as k6 does at start.
func (h *httpWriter) createDatabase(ctx context.Context) error {
	q := url.Values{"q": {"CREATE DATABASE " + quoteIdent(h.db)}}
	return h.do(ctx, h.query, "application/x-www-form-urlencoded", []byte(q.Encode()))
}

// quoteIdent quotes an InfluxQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// udpWriter sends points as datagrams of at most PayloadSize bytes, cut
// between lines (a longer line goes alone).
type udpWriter struct {
	conn net.Conn
	size int
}

func newUDPWriter(cfg Config) (*udpWriter, error) {
	conn, err := net.Dial("udp", strings.TrimPrefix(cfg.Addr, "udp://"))
	if err != nil {
		return nil, err
	}
	return &udpWriter{conn: conn, size: cfg.PayloadSize}, nil
}

func (u *udpWriter) write(_ context.Context, body []byte) error {
	for len(body) > 0 {
		n := len(body)
		if n > u.size {
			n = bytes.LastIndexByte(body[:u.size], '\n') + 1
			if n == 0 {
				n = bytes.IndexByte(body, '\n') + 1
			}
			if n == 0 {
				n = len(body)
			}
		}
		if _, err := u.conn.Write(body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}
