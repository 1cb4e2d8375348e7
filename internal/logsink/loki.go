package logsink

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LokiOptions is a parsed --log-output=loki value, with k6 v2.2.0's
// defaults for what the value leaves out.
type LokiOptions struct {
	// Addr is the push URL; k6's default is a Loki on this machine.
	Addr string
	// Labels are the label.NAME=V pairs, in the order given.
	Labels [][2]string
	// Headers are the header.NAME=V pairs sent with every push.
	Headers [][2]string
	// Limit is the most lines pushed per PushPeriod; the rest are counted
	// and reported in one warning line.
	Limit int
	// PushPeriod is how often lines are pushed, and each push's timeout.
	PushPeriod time.Duration
	// MsgMaxSize is the longest line in characters; a longer one keeps its
	// two ends around a note of what was left out.
	MsgMaxSize int
	// AllowedLabels, when set, are the only labels kept as labels; the
	// others are appended to the line as key=value.
	AllowedLabels []string
}

// lokiDefaults are k6's defaults for --log-output=loki.
func lokiDefaults() LokiOptions {
	return LokiOptions{
		Addr:       "http://127.0.0.1:3100/loki/api/v1/push",
		Limit:      100,
		PushPeriod: time.Second,
		MsgMaxSize: 1024 * 1024,
	}
}

// parseLoki reads "loki" or "loki=URL,key=value,…" with k6's keys; level=
// sets out.Level. Every error names the key and the option.
func parseLoki(s string, out *Output) error {
	o := lokiDefaults()
	out.Loki = &o
	if s == "loki" {
		return nil
	}
	tokens, err := splitLoki(s)
	if err != nil {
		return fmt.Errorf("--log-output=%s: %v", s, err)
	}
	positive := func(key, v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--log-output=%s: %s=%q is not a positive whole number", s, key, v)
		}
		return n, nil
	}
	for _, t := range tokens {
		key, val := t[0], t[1]
		switch {
		case key == "loki":
			o.Addr = val
		case key == "pushPeriod":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return fmt.Errorf("--log-output=%s: pushPeriod=%q is not a positive duration such as 1s", s, val)
			}
			o.PushPeriod = d
		case key == "limit":
			if o.Limit, err = positive(key, val); err != nil {
				return err
			}
		case key == "msgMaxSize":
			if o.MsgMaxSize, err = positive(key, val); err != nil {
				return err
			}
		case key == "level":
			if out.Level, err = parseLevel(val); err != nil {
				return fmt.Errorf("--log-output=%s: level=%q is not a level: use debug, info, warning or error", s, val)
			}
		case key == "allowedLabels":
			o.AllowedLabels = strings.Split(val, ",")
		case key == "profile":
		case strings.HasPrefix(key, "label."):
			o.Labels = append(o.Labels, [2]string{strings.TrimPrefix(key, "label."), val})
		case strings.HasPrefix(key, "header."):
			o.Headers = append(o.Headers, [2]string{strings.TrimPrefix(key, "header."), val})
		default:
			return fmt.Errorf("--log-output=%s: unknown loki key %q: use label.NAME, header.NAME, limit, level, pushPeriod, msgMaxSize or allowedLabels", s, key)
		}
	}
	return nil
}

// splitLoki splits k6's key=value,… grammar, where a value in brackets
// ("allowedLabels=[a,b]") may hold commas.
func splitLoki(s string) ([][2]string, error) {
	var tokens [][2]string
	for s != "" {
		eq := strings.IndexByte(s, '=')
		comma := strings.IndexByte(s, ',')
		if eq < 0 || eq == len(s)-1 || (comma >= 0 && comma < eq) {
			key := s
			if comma >= 0 && (eq < 0 || comma < eq) {
				key = s[:comma]
			}
			return nil, fmt.Errorf("key %q has no value", strings.TrimSuffix(key, "="))
		}
		key, rest := s[:eq], s[eq+1:]
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("the list of %s has no closing ]", key)
			}
			if end+1 < len(rest) && rest[end+1] != ',' {
				return nil, fmt.Errorf("the list of %s is not followed by a comma", key)
			}
			tokens = append(tokens, [2]string{key, rest[1:end]})
			s = strings.TrimPrefix(rest[end+1:], ",")
			continue
		}
		val, next, _ := strings.Cut(rest, ",")
		tokens = append(tokens, [2]string{key, val})
		s = next
	}
	return tokens, nil
}

// lokiLine is one line waiting to be pushed.
type lokiLine struct {
	labels map[string]string
	t      int64 // Unix nanoseconds
	msg    string
}

// lokiPusher buffers lines and pushes them to Loki from its own goroutine
// every push period. Add never blocks: past the limit of a period lines
// are only counted, so a slow or stalled Loki costs the run nothing.
type lokiPusher struct {
	o      LokiOptions
	client *http.Client
	failed func(msg string, err error) // reports a push that failed
	// endWait bounds the run's end: the push in flight when close is
	// called, and then the last push, get this long each at most.
	endWait time.Duration
	ctx     context.Context // cancelled endWait after close
	cancel  context.CancelFunc

	mu      sync.Mutex
	batch   []lokiLine
	dropped int

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// newLokiPusher starts the pusher of o; failed reports failed pushes.
func newLokiPusher(o LokiOptions, failed func(string, error)) *lokiPusher {
	p := &lokiPusher{
		o:       o,
		client:  &http.Client{Timeout: o.PushPeriod},
		failed:  failed,
		endWait: min(o.PushPeriod, maxEndWait),
		batch:   make([]lokiLine, 0, min(o.Limit, batchCap)),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.loop()
	return p
}

// batchCap is the most lines a batch holds room for before the first
// arrives, so that a large limit costs memory only when the lines come.
const batchCap = 1024

// maxEndWait caps how long each of the last two pushes may hold the end
// of a run, so a Loki that hangs with a long pushPeriod cannot.
const maxEndWait = 5 * time.Second

// drop counts a line and reports true when the period's limit is
// reached, so that a flood of lines past it costs no allocation.
func (p *lokiPusher) drop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.batch) < p.o.Limit {
		return false
	}
	p.dropped++
	return true
}

// add queues one line with its labels (level, source unless empty, the
// fields and the configured labels), or counts it when the period's limit
// is reached.
func (p *lokiPusher) add(t time.Time, level Level, msg, source string, fields map[string]slog.Value) {
	l := make(map[string]string, len(fields)+len(p.o.Labels)+2)
	for k, v := range fields {
		l[k] = v.String()
	}
	if source != "" {
		l["source"] = source
	}
	for _, kv := range p.o.Labels {
		l[kv[0]] = kv[1]
	}
	l["level"] = level.String()
	msg = p.filter(l, msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.batch) >= p.o.Limit {
		p.dropped++
		return
	}
	p.batch = append(p.batch, lokiLine{labels: l, t: t.UnixNano(), msg: msg})
}

// filter moves the labels outside AllowedLabels, sorted, to the end of
// msg as " key=value", as k6 does.
func (p *lokiPusher) filter(labels map[string]string, msg string) string {
	if p.o.AllowedLabels == nil {
		return msg
	}
	var b strings.Builder
	b.WriteString(msg)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if slices.Contains(p.o.AllowedLabels, k) {
			continue
		}
		b.WriteString(" " + k + "=" + labels[k])
		delete(labels, k)
	}
	return b.String()
}

// loop pushes every period until close asks for the last push.
func (p *lokiPusher) loop() {
	defer close(p.done)
	tick := time.NewTicker(p.o.PushPeriod)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			p.flush(p.ctx, p.client)
		case <-p.stop:
			last := *p.client // the same timeout error as k6's, after endWait
			last.Timeout = p.endWait
			p.flush(context.Background(), &last)
			return
		}
	}
}

// close pushes what is left and returns once that push ended, in at most
// two end waits: one for a push in flight, one for the last.
func (p *lokiPusher) close() {
	p.once.Do(func() {
		close(p.stop)
		time.AfterFunc(p.endWait, p.cancel)
	})
	<-p.done
	p.cancel()
}

// flush takes the period's lines and pushes them in one request.
func (p *lokiPusher) flush(ctx context.Context, client *http.Client) {
	p.mu.Lock()
	lines, dropped := p.batch, p.dropped
	p.batch, p.dropped = make([]lokiLine, 0, min(p.o.Limit, batchCap)), 0
	p.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	slices.SortStableFunc(lines, func(a, b lokiLine) int { return cmp.Compare(a.t, b.t) })
	if dropped > 0 {
		l := map[string]string{}
		for _, kv := range p.o.Labels {
			l[kv[0]] = kv[1]
		}
		l["level"] = Warn.String()
		msg := fmt.Sprintf("k6 dropped %d log messages because they were above the limit of %d messages / %s", dropped, p.o.Limit, p.o.PushPeriod)
		lines = append(lines, lokiLine{labels: l, t: lines[len(lines)-1].t, msg: p.filter(l, msg)})
	}
	if err := p.push(ctx, client, lokiBody(lines, p.o.MsgMaxSize)); err != nil {
		p.failed("Error while sending logs to loki", err)
	}
}

// push posts one body to Loki; an answer of 400 or more is an error that
// quotes Loki's answer.
func (p *lokiPusher) push(ctx context.Context, client *http.Client, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.o.Addr, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range p.o.Headers {
		req.Header.Add(h[0], h[1])
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
	if res.StatusCode >= 400 {
		return fmt.Errorf("got %d from loki: %s", res.StatusCode, answer)
	}
	return nil
}

// lokiBody is Loki's push format: one stream per distinct label set, in
// the order first seen, each value a pair of the time in nanoseconds as a
// string and the line.
func lokiBody(lines []lokiLine, maxSize int) []byte {
	type stream struct {
		Stream map[string]string `json:"stream"`
		Values [][2]string       `json:"values"`
	}
	var streams []*stream
	for _, l := range lines {
		i := slices.IndexFunc(streams, func(s *stream) bool { return maps.Equal(s.Stream, l.labels) })
		if i < 0 {
			streams = append(streams, &stream{Stream: l.labels})
			i = len(streams) - 1
		}
		streams[i].Values = append(streams[i].Values, [2]string{strconv.FormatInt(l.t, 10), cut(l.msg, maxSize)})
	}
	b, _ := json.Marshal(struct {
		Streams []*stream `json:"streams"`
	}{streams})
	return b
}

// cut shortens a line of more than max characters to its first and last
// max/2 around "... omitting N characters ...", as k6 does.
func cut(msg string, max int) string {
	r := []rune(msg)
	if len(r) <= max {
		return msg
	}
	return string(r[:max/2]) + "... omitting " + strconv.Itoa(len(r)-max) + " characters ..." + string(r[len(r)-max/2:])
}
