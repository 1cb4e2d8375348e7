// Package dashboard is the web dashboard output (-o web-dashboard, or
// K6_WEB_DASHBOARD=true) and the self-contained HTML report it exports.
//
// The output aggregates samples into fixed intervals (K6_WEB_DASHBOARD_PERIOD)
// per scenario and for the whole test: HdrHistograms of http_req_duration,
// corrected_latency and schedule_lag reduced to p50/p99/max, counts of
// requests, failures, iterations, intended and dropped arrivals, the vus
// gauge and the backlog; and per request name (the per-endpoint view) the
// raw duration against corrected_latency, over the run and per interval.
// Charts are drawn server-side as SVG with gonum.org/v1/plot, so the live
// page (which fetches fresh ones every period) and the report file (which
// inlines them) show the same pictures and the report needs no script or
// network at all.
package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

// Name is the output's name for -o.
const Name = "web-dashboard"

// The variables that configure it, as in k6.
const (
	EnvEnable = "K6_WEB_DASHBOARD"
	EnvHost   = "K6_WEB_DASHBOARD_HOST"
	EnvPort   = "K6_WEB_DASHBOARD_PORT"
	EnvPeriod = "K6_WEB_DASHBOARD_PERIOD"
	EnvOpen   = "K6_WEB_DASHBOARD_OPEN"
	EnvExport = "K6_WEB_DASHBOARD_EXPORT"
)

// Defaults of the switches.
const (
	DefaultHost   = "127.0.0.1"
	DefaultPort   = 5665
	DefaultPeriod = 10 * time.Second
)

func init() { output.Register(Name, New) }

// Config is the output's configuration.
type Config struct {
	Host   string
	Port   int // -1: no server
	Period time.Duration
	Open   bool
	Export string
}

// ConfigFromEnv reads the K6_WEB_DASHBOARD_* variables.
func ConfigFromEnv(env map[string]string) (Config, error) {
	c := Config{Host: DefaultHost, Port: DefaultPort, Period: DefaultPeriod}
	if v := strings.TrimSpace(env[EnvHost]); v != "" {
		c.Host = v
	}
	if v := strings.TrimSpace(env[EnvPort]); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < -1 || p > 65535 {
			return c, fmt.Errorf("%s: %q is not a port (0–65535, or -1 for no server)", EnvPort, v)
		}
		c.Port = p
	}
	if v := strings.TrimSpace(env[EnvPeriod]); v != "" {
		d, err := duration.Parse(v)
		if err != nil || d < 100*time.Millisecond {
			return c, fmt.Errorf("%s: %q is not a duration of at least 100ms", EnvPeriod, v)
		}
		c.Period = d
	}
	if v := strings.TrimSpace(env[EnvOpen]); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("%s: %q is not true or false", EnvOpen, v)
		}
		c.Open = b
	}
	c.Export = strings.TrimSpace(env[EnvExport])
	return c, nil
}

// inputBuffer is how many batches may wait for the output's goroutine.
const inputBuffer = 4096

// A report needs enough intervals to draw curves: a run shorter than
// fineRows periods (5 minutes at the default 10 s) gets its report at a
// tenth of the period, but no finer than minFinePeriod (the hdrlog's
// intervals are 1 s by default too).
const (
	fineRows      = 30
	fineDivisor   = 10
	minFinePeriod = 100 * time.Millisecond
)

// The output takes its optional capability from the output kit.
var _ output.SummaryReceiver = (*Output)(nil)

// Output is the web dashboard.
type Output struct {
	cfg     Config
	logf    func(string, ...any)
	now     func() time.Time
	secrets *secrets.Store // hidden in the live page, its content and the report

	// loop runs the goroutine that aggregates samples and redraws the
	// page every period.
	loop *output.Loop

	ln   net.Listener
	srv  *http.Server
	addr string

	// Owned by the goroutine. fine aggregates the same samples at a tenth
	// of the period, for the report of a run too short to show a curve at
	// the period; it is dropped once the run reaches fineRows periods.
	agg  *Aggregator
	fine *Aggregator

	mu      sync.Mutex
	page    []byte // the whole page as last rendered
	content []byte // /api/content's answer: its replaceable part and whether it ended, as JSON

	sum *summary.Input
}

// New builds the output from the K6_WEB_DASHBOARD_* variables.
func New(p output.Params) (output.Output, error) {
	cfg, err := ConfigFromEnv(p.Env)
	if err != nil {
		return nil, err
	}
	if p.Arg != "" {
		return nil, fmt.Errorf("the web-dashboard output takes no argument; configure it with K6_WEB_DASHBOARD_* variables")
	}
	o := NewWithConfig(cfg, p.Logf, p.Now)
	o.secrets = p.Secrets
	return o, nil
}

// NewWithConfig builds the output from cfg.
func NewWithConfig(cfg Config, logf func(string, ...any), now func() time.Time) *Output {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if now == nil {
		now = time.Now
	}
	o := &Output{cfg: cfg, logf: logf, now: now}
	o.loop = output.NewLoop(inputBuffer, cfg.Period, output.LoopSteps{
		Ingest: func(b []metrics.Sample) {
			o.agg.Add(b)
			if o.fine != nil {
				o.fine.Add(b)
			}
		},
		Tick:  func() { o.redraw(o.now(), false) },
		Final: func() { o.redraw(time.Time{}, true) },
	})
	return o
}

// finePeriod is the report's interval for a short run, 0 when the period
// is already as fine as that.
func finePeriod(period time.Duration) time.Duration {
	if f := max(period/fineDivisor, minFinePeriod); f < period {
		return f
	}
	return 0
}

// Description is shown in the banner; it holds the page's address.
func (o *Output) Description() string {
	var parts []string
	if o.addr != "" {
		parts = append(parts, o.addr)
	}
	if o.cfg.Export != "" {
		parts = append(parts, "report "+o.cfg.Export)
	}
	if len(parts) == 0 {
		return Name
	}
	return Name + " (" + strings.Join(parts, ", ") + ")"
}

// Addr is the live page's address, "" when there is no server.
func (o *Output) Addr() string { return o.addr }

// Start opens the server (unless the port is -1) and starts aggregating.
// It never waits for a browser.
func (o *Output) Start() error {
	start := o.now()
	o.agg = NewAggregator(start, o.cfg.Period)
	if f := finePeriod(o.cfg.Period); f > 0 && o.cfg.Export != "" {
		o.fine = NewAggregator(start, f)
	}
	if err := o.render(false); err != nil {
		return err
	}
	if o.cfg.Port >= 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(o.cfg.Host, strconv.Itoa(o.cfg.Port)))
		if err != nil {
			return fmt.Errorf("web dashboard: cannot listen on %s:%d (%s, %s): %w", o.cfg.Host, o.cfg.Port, EnvHost, EnvPort, err)
		}
		o.ln = ln
		o.addr = "http://" + ln.Addr().String()
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", o.servePage)
		mux.HandleFunc("GET /api/content", o.serveContent)
		o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = o.srv.Serve(ln) }()
		if o.cfg.Open {
			openBrowser(o.addr, o.logf)
		}
	}
	o.loop.Start()
	return nil
}

// AddSamples hands the batch over without waiting.
func (o *Output) AddSamples(batch []metrics.Sample) { o.loop.AddSamples(batch) }

// ReceiveSummary takes the end-of-test summary, for the report; the
// engine calls it before Stop.
func (o *Output) ReceiveSummary(in *summary.Input) {
	o.mu.Lock()
	o.sum = in
	o.mu.Unlock()
}

// Stop renders the final page, writes the report when asked to and shuts
// the server down.
func (o *Output) Stop() error {
	return o.loop.Stop(0, func(bool) error {
		var err error
		if n := o.loop.Dropped(); n > 0 {
			o.logf("web dashboard: %d samples were dropped because its buffer was full; its charts are incomplete", n)
		}
		if o.cfg.Export != "" {
			err = o.export()
		}
		if o.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = o.srv.Shutdown(ctx)
		}
		return err
	})
}

// redraw closes the intervals that ended by now (all of them when now is
// zero) and renders the page; done marks the last rendering.
func (o *Output) redraw(now time.Time, done bool) {
	o.agg.Close(now)
	if o.fine != nil {
		if !now.IsZero() && now.Sub(o.agg.start) >= fineRows*o.cfg.Period {
			// Long enough for curves at the period: the report uses those.
			o.fine = nil
		} else {
			o.fine.Close(now)
		}
	}
	if err := o.render(done); err != nil {
		o.logf("web dashboard: %v", err)
	}
}

// render draws the live page from the timeline as it stands.
func (o *Output) render(done bool) error {
	p, err := BuildPage(o.agg.Snapshot(done), nil, true, "Live view of the running test.")
	if err != nil {
		return err
	}
	page, err := p.Render()
	if err != nil {
		return err
	}
	content, err := p.RenderContent()
	if err != nil {
		return err
	}
	// Names and scenarios on the page come from the script: a fetched
	// secret is hidden before anyone can ask for the page.
	page, content = o.secrets.RedactBytes(page), o.secrets.RedactBytes(content)
	// Encoded once per render, not per request: 50 browsers polling the
	// page each second cost the generator the CPU of the encoding each
	// time, enough to delay arrivals on two cores (hostile probe 4).
	answer, err := json.Marshal(struct {
		HTML string `json:"html"`
		Done bool   `json:"done"`
	}{string(content), done})
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.page, o.content = page, append(answer, '\n')
	o.mu.Unlock()
	return nil
}

func (o *Output) export() error {
	o.mu.Lock()
	in := o.sum
	o.mu.Unlock()
	// The loop has ended: its aggregators are this goroutine's now.
	agg := o.agg
	if o.fine != nil && o.now().Sub(o.agg.start) < fineRows*o.cfg.Period {
		agg = o.fine
	}
	p, err := BuildPage(agg.Snapshot(true), in, false,
		fmt.Sprintf("Report of the run started %s; intervals of %s.", agg.start.Format(time.RFC3339), agg.period))
	if err != nil {
		return fmt.Errorf("web dashboard report: %w", err)
	}
	b, err := p.Render()
	if err != nil {
		return fmt.Errorf("web dashboard report: %w", err)
	}
	if err := wholefile.Write(o.cfg.Export, o.secrets.RedactBytes(b), 0o644); err != nil {
		return fmt.Errorf("web dashboard report (%s): %w", EnvExport, err)
	}
	return nil
}

func (o *Output) servePage(w http.ResponseWriter, _ *http.Request) {
	o.mu.Lock()
	b := o.page
	o.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func (o *Output) serveContent(w http.ResponseWriter, _ *http.Request) {
	o.mu.Lock()
	b := o.content
	o.mu.Unlock()
	if b == nil {
		b = []byte(`{"html":"","done":false}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// openBrowser asks the desktop to open url, without waiting for it.
func openBrowser(url string, logf func(string, ...any)) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		logf("web dashboard: could not open a browser (%v); open %s yourself", err, url)
		return
	}
	go func() { _ = cmd.Wait() }()
}
