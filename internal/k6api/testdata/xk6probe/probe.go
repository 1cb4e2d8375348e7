// Package probe is a test extension written against k6's extension API at
// go.k6.io/k6/v2, as published xk6 extensions are: it uses every part of
// the API the k6api test checks on metronome, and nothing of metronome's.
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/js/modules"
	"go.k6.io/k6/v2/js/promises"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

func init() { modules.Register("k6/x/probe", new(rootModule)) }

// rootModule makes one instance per VU.
type rootModule struct{}

// probe is a VU's instance.
type probe struct {
	vu       modules.VU
	greeting string
	ops      *metrics.Metric
	latency  *metrics.Metric
	late     *metrics.Metric
	direct   *metrics.Metric
	opTime   *metrics.Metric
	own      *metrics.Metric // of a registry of the instance's own
	client   *http.Client    // get's, made at the VU's first call
	lastCtx  context.Context // of the call that last called prevDone
	reg      *metrics.Registry
}

// lateDropped counts the late pushes PushIfNotDone refused, across VUs.
var lateDropped atomic.Int64

// kept is the instance whose VU called keep last.
var kept atomic.Pointer[probe]

func (*rootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	env := vu.InitEnv()
	p := &probe{vu: vu, greeting: "hello"}
	if g, ok := env.LookupEnv("PROBE_GREETING"); ok {
		p.greeting = g
	}
	p.reg = env.Registry
	p.ops = env.Registry.MustNewMetric("probe_ops", metrics.Counter)
	p.latency = env.Registry.MustNewMetric("probe_latency", metrics.Trend, metrics.Time)
	p.late = env.Registry.MustNewMetric("probe_late", metrics.Counter)
	p.direct = env.Registry.MustNewMetric("probe_direct", metrics.Counter)
	p.opTime = env.Registry.MustNewMetric("probe_op_duration", metrics.Trend, metrics.Time)
	// xk6-dns defines its metrics so, in a registry of each instance.
	p.own = metrics.NewRegistry().MustNewMetric("probe_own", metrics.Counter)
	if _, err := env.Registry.NewMetric("probe_ops", metrics.Gauge); err != nil {
		env.Logger.WithField("probe", "registry").Debug(err.Error())
	}
	env.Logger.WithFields(logrus.Fields{"probe": "init", "vu_iter": 0}).Info("probe instantiated")
	return p
}

func (p *probe) Exports() modules.Exports {
	return modules.Exports{Named: map[string]any{
		"greet":       p.greet,
		"work":        p.work,
		"timed":       p.timed,
		"record":      p.record,
		"direct":      p.directSend,
		"late":        p.lateAsync,
		"lateDropped": func() int64 { return lateDropped.Load() },
		"dial":        p.dial,
		"exchange":    p.exchange,
		"get":         p.get,
		"resolve":     p.resolve,
		"fence":       p.fence,
		"keep":        func() { kept.Store(p) },
		"keptState":   keptState,
		"prevDone":    p.prevDone,
		"lateResolve": p.lateResolve,
		"lateCall":    p.lateCall,
		"echo":        echo,
		"thing":       func() *Thing { return &Thing{Label: "made", HTTPCode: 201} },
		"fail":        p.fail,
		"initOnly":    p.initOnly,
		"options":     p.options,
		"surface":     p.surface,
		"send":        p.send,
		"jarCookies":  p.jarCookies,
		"duration":    func(s string) (string, error) { d, err := types.ParseExtendedDuration(s); return d.String(), err },
	}}
}

// greet answers synchronously, with the greeting from the process
// environment.
func (p *probe) greet(name string) string { return p.greeting + ", " + name }

// tagsNow are the VU's current tags with the op tag.
func (p *probe) tagsNow(op string) metrics.TagsAndMeta {
	tm := p.vu.State().Tags.GetCurrentValues()
	tm.SetTag("op", op)
	return tm
}

// work resolves after ms milliseconds, measured into probe_latency and
// counted in probe_ops from the goroutine that waited.
func (p *probe) work(ms int) *sobek.Promise {
	promise, resolve, reject := promises.New(p.vu)
	state, ctx := p.vu.State(), p.vu.Context()
	tm := p.tagsNow("work")
	go func() {
		start := time.Now()
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			reject(errors.New("work interrupted"))
			return
		}
		now := time.Now()
		metrics.PushIfNotDone(ctx, state.Samples, metrics.ConnectedSamples{
			Samples: []metrics.Sample{
				{TimeSeries: metrics.TimeSeries{Metric: p.ops, Tags: tm.Tags}, Time: now, Value: 1, Metadata: tm.Metadata},
				{TimeSeries: metrics.TimeSeries{Metric: p.latency, Tags: tm.Tags}, Time: now, Value: metrics.D(now.Sub(start))},
			},
			Tags: tm.Tags, Time: now,
		})
		resolve(ms)
	}()
	return promise
}

// timed takes ms milliseconds in a goroutine of its own, which pushes
// the time into probe_latency, and returns once it did.
func (p *probe) timed(ms int) bool {
	state, ctx := p.vu.State(), p.vu.Context()
	tm := p.tagsNow("timed")
	done := make(chan bool)
	go func() {
		start := time.Now()
		time.Sleep(time.Duration(ms) * time.Millisecond)
		now := time.Now()
		done <- metrics.PushIfNotDone(ctx, state.Samples, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: p.latency, Tags: tm.Tags}, Time: now, Value: metrics.D(now.Sub(start)),
		})
	}()
	return <-done
}

// record counts value in probe_ops on the VU's goroutine, with the tags
// the script gives.
func (p *probe) record(value float64, tags sobek.Value) {
	tm := p.tagsNow("record")
	if err := common.ApplyCustomUserTags(p.vu.Runtime(), &tm, tags); err != nil {
		common.Throw(p.vu.Runtime(), err)
	}
	metrics.PushIfNotDone(p.vu.Context(), p.vu.State().Samples, metrics.Samples{
		{TimeSeries: metrics.TimeSeries{Metric: p.ops, Tags: tm.Tags}, Time: time.Now(), Value: value},
		{TimeSeries: metrics.TimeSeries{Metric: p.own, Tags: tm.Tags}, Time: time.Now(), Value: 1},
	})
}

// directSend sends on State.Samples itself, as some extensions do.
func (p *probe) directSend() {
	st := p.vu.State()
	tags := st.Tags.GetCurrentValues().Tags
	st.Samples <- metrics.Samples{
		{TimeSeries: metrics.TimeSeries{Metric: p.direct, Tags: tags}, Time: time.Now(), Value: 1},
		{TimeSeries: metrics.TimeSeries{Metric: p.own, Tags: tags}, Time: time.Now(), Value: 1},
	}
}

// lateAsync returns a promise that a goroutine settles only once the VU's
// context is done, after trying to push a sample: PushIfNotDone must
// refuse it.
func (p *probe) lateAsync() *sobek.Promise {
	promise, resolve, _ := promises.New(p.vu)
	state, ctx := p.vu.State(), p.vu.Context()
	go func() {
		<-ctx.Done()
		if !metrics.PushIfNotDone(ctx, state.Samples, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: p.late, Tags: state.Tags.GetCurrentValues().Tags}, Time: time.Now(), Value: 1,
		}) {
			lateDropped.Add(1)
		}
		resolve(nil)
	}()
	return promise
}

// dial connects through the VU's dialer and says what happened.
func (p *probe) dial(addr string) string {
	var d lib.DialContexter = p.vu.State().Dialer
	conn, err := d.DialContext(p.vu.Context(), "tcp", addr)
	if err != nil {
		return "refused: " + err.Error()
	}
	_ = conn.Close()
	return "connected"
}

// exchange connects through the VU's dialer, writes msg and reads as
// many bytes back.
func (p *probe) exchange(addr, msg string) string {
	conn, err := p.vu.State().Dialer.DialContext(p.vu.Context(), "tcp", addr)
	if err != nil {
		return "refused: " + err.Error()
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(msg)); err != nil {
		return err.Error()
	}
	back := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, back); err != nil {
		return err.Error()
	}
	return string(back)
}

// get requests url over a connection of the VU's dialer, as a client
// extension (xk6-redis, SQL) talks to its server, and resolves with the
// status code. Its own goroutine times the exchange into
// probe_op_duration, tagged op=get, and pushes the sample before the
// promise settles, so the iteration ends after its operation is recorded.
func (p *probe) get(url string) *sobek.Promise {
	promise, resolve, reject := promises.New(p.vu)
	state, ctx := p.vu.State(), p.vu.Context()
	if p.client == nil {
		p.client = &http.Client{Transport: &http.Transport{DialContext: state.Dialer.DialContext}}
	}
	client, tm := p.client, p.tagsNow("get")
	go func() {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			reject(err)
			return
		}
		res, err := client.Do(req)
		if err != nil {
			reject(err)
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		now := time.Now()
		metrics.PushIfNotDone(ctx, state.Samples, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: p.opTime, Tags: tm.Tags}, Time: now, Value: metrics.D(now.Sub(start)), Metadata: tm.Metadata,
		})
		resolve(res.StatusCode)
	}()
	return promise
}

// resolve asks the VU's dialer, as an AddrResolver, where it would
// connect for addr.
func (p *probe) resolve(addr string) string {
	r := p.vu.State().GetAddrResolver()
	if r == nil {
		return "no resolver"
	}
	ip, port, err := r.ResolveAddr(addr)
	if err != nil {
		return "refused: " + err.Error()
	}
	return fmt.Sprintf("%s port %d", ip, port)
}

// fence says which blockHostnames pattern blocks host, and how many
// blacklistIPs ranges there are, as the VU's dialer shows them when taken
// as k6's *netext.Dialer: xk6-dns checks a name so before it asks a
// server about it.
func (p *probe) fence(host string) string {
	d, ok := p.vu.State().Dialer.(*netext.Dialer)
	if !ok {
		return fmt.Sprintf("the dialer is a %T", p.vu.State().Dialer)
	}
	if d.BlockedHostnames == nil {
		return fmt.Sprintf("no blocked names, %d ranges", len(d.Blacklist))
	}
	pattern, found := d.BlockedHostnames.Contains(host)
	return fmt.Sprintf("%s %q %v, %d ranges", host, pattern, found, len(d.Blacklist))
}

// keptState asks the VU of the instance kept last for its State from
// another VU's goroutine, once that VU has finished its iterations, as
// xk6-tcp's read loop asks for the tags of a connection that outlived its
// iteration: k6's VU has its State for its whole life after the init
// context.
func keptState() string {
	k := kept.Load()
	if k == nil {
		return "nothing kept"
	}
	st := k.vu.State()
	if st == nil {
		return "no state"
	}
	return fmt.Sprintf("vu=%d", st.VUID)
}

// prevDone says whether the context of the call in which the VU last
// called it has ended, and keeps the current one: k6 cancels each
// iteration's context when the iteration returns.
func (p *probe) prevDone() string {
	prev := p.lastCtx
	p.lastCtx = p.vu.Context()
	switch {
	case prev == nil:
		return "none"
	case prev.Err() != nil:
		return "done"
	}
	return "live"
}

// lateResolve returns a promise that a goroutine of its own resolves
// after ms milliseconds, reserving its place in the VU's event loop only
// then, as extensions built on k6-taskqueue-lib (xk6-tcp) reserve from a
// goroutine that may run late.
func (p *probe) lateResolve(ms int) *sobek.Promise {
	promise, resolve, _ := p.vu.Runtime().NewPromise()
	go func() {
		time.Sleep(time.Duration(ms) * time.Millisecond)
		queue := p.vu.RegisterCallback()
		queue(func() error { return resolve(ms) })
	}()
	return promise
}

// lateCall calls fn on the VU's event loop, reserving its place from a
// goroutine of its own started now, as xk6-mqtt's client loop does.
func (p *probe) lateCall(fn sobek.Callable) {
	go func() {
		queue := p.vu.RegisterCallback()
		queue(func() error {
			_, err := fn(sobek.Undefined())
			return err
		})
	}()
}

// Options are what echo takes from the script, by k6's names.
type Options struct {
	ContinueOnError bool
	UserID          string
	HTTPMethod      string
	Renamed         string `js:"custom_name"`
	JSONOnly        string `json:"jsonName"`
	Hidden          string `js:"-"`
}

// echo returns what it was given.
func echo(o Options) Options { return o }

// Thing has methods named by k6's rule.
type Thing struct {
	Label    string
	HTTPCode int
}

// DescribeIt is describeIt to scripts.
func (t *Thing) DescribeIt() string { return fmt.Sprintf("%s/%d", t.Label, t.HTTPCode) }

// JSON is json to scripts.
func (t *Thing) JSON() string { return `{"label":"` + t.Label + `"}` }

// fail throws msg as a GoError.
func (p *probe) fail(msg string) { common.Throw(p.vu.Runtime(), errors.New(msg)) }

// initOnly refuses to run outside the init context.
func (p *probe) initOnly() string {
	if p.vu.State() != nil {
		common.Throw(p.vu.Runtime(), common.NewInitContextError("initOnly may only be called in the init context"))
	}
	return "init"
}

// options reports some of the options the VU's state carries.
func (p *probe) options() string {
	o := p.vu.State().Options
	return fmt.Sprintf("maxRedirects=%d throw=%v systemTags.scenario=%v vu=%d", o.MaxRedirects.Int64, o.Throw.Bool,
		o.SystemTags.Has(metrics.TagScenario), p.vu.State().VUID)
}
