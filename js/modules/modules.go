// Package modules is the contract between metronome's JavaScript runtime
// and the modules scripts import ("k6", "k6/http", "k6/x/..."). A module is
// Go code; it is instantiated once per VU runtime and sees the VU through
// the VU interface. Built-in and third-party modules register alike, with
// Register from an init function.
package modules

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/ratelimit"
	"github.com/metronome-load/metronome/secrets"
)

// Module is a JavaScript module implemented in Go.
type Module interface {
	// Instantiate builds the module's exports for one VU's runtime. It
	// runs in the init context of that VU.
	Instantiate(vu VU) (Exports, error)
}

// ModuleFunc adapts a function to Module.
type ModuleFunc func(vu VU) (Exports, error)

// Instantiate calls f(vu).
func (f ModuleFunc) Instantiate(vu VU) (Exports, error) { return f(vu) }

// OnFirstUse marks m as a module a VU instantiates when its script first
// reads one of m's exports rather than when it imports m: a VU that never
// uses the module (its script imports k6/http for setup() alone, say)
// never pays for an instance. m's Instantiate may then run outside the
// init context, in an iteration, and must not fail; its Exports have no
// Default, so that the default export, the object of the named exports,
// needs no instance until one of them is read.
func OnFirstUse(m Module) Module { return onFirstUse{m} }

type onFirstUse struct{ Module }

// IsOnFirstUse reports whether m was marked with OnFirstUse.
func IsOnFirstUse(m Module) bool {
	_, ok := m.(onFirstUse)
	return ok
}

// CallScoped is implemented by modules whose instances need the VU's
// Context to end when each call (setup, an iteration, teardown) returns,
// as k6 cancels the context of each: a script that imports one gives its
// VUs, for every such call, a context of the call's own, cancelled when
// it returns, so that goroutines an instance started for the call stop
// with it. k6's extension API (go.k6.io/k6) marks its modules so; a
// script without one pays nothing.
type CallScoped interface {
	Module
	ScopesCalls()
}

// Exports are what `import` sees. Named exports are what
// `import { x } from` binds; Default is `import m from` (when nil, the
// default export is an object holding the named exports).
type Exports struct {
	Default any
	Named   map[string]any
}

// Register makes a module importable under name ("k6/x/kafka").
func Register(name string, m Module) { extension.Register(extension.JSModule, name, m) }

// Lookup returns the module registered as name.
func Lookup(name string) (Module, bool) {
	e, ok := extension.Get(extension.JSModule, name)
	if !ok {
		return nil, false
	}
	m, ok := e.Value.(Module)
	return m, ok
}

// VU is what a module sees of the VU it lives in. Every method is called on
// the VU's own goroutine.
type VU interface {
	// Runtime is the VU's JavaScript runtime.
	Runtime() *sobek.Runtime
	// Context is cancelled when the current iteration is interrupted,
	// and when each call returns in a script that imports a CallScoped
	// module; in the init context it is the run's context.
	Context() context.Context
	// InitEnv is non-nil only while the init context runs.
	InitEnv() *InitEnv
	// State is nil in the init context and set while setup, an iteration
	// or teardown runs.
	State() *State
	// RegisterCallback reserves a place in the VU's event loop, so the
	// iteration does not end before the callback ran. The returned
	// function queues f to run on the VU goroutine; call it exactly once,
	// from any goroutine. RegisterCallback itself is best called on the
	// VU's goroutine, where the reservation is sure to hold the
	// iteration; it is safe from any other, as k6's is.
	RegisterCallback() func(f func() error)
}

// GatedRecorder is the State.Recorder a VU hands modules: Record drops
// samples once the current iteration was interrupted, and Ungated is the
// buffer behind the gate, for the samples of a request answered before the
// interruption and for metronome's own charge of one cut off by it
// (jsmod.Measured, jsmod.RecordInterrupted).
type GatedRecorder interface {
	metrics.Recorder
	Ungated() metrics.Recorder
}

// MeasuringVU is implemented by VUs that keep what asynchronous work
// measured when an interruption ends the iteration before the work's
// continuation ran (jsmod.AsyncMeasured). RegisterMeasured is
// RegisterCallback for such work: the function it returns queues record,
// which records what the work measured and runs no JavaScript, and f. The
// VU runs record before f, or, when the iteration was interrupted, waits
// briefly for the work to end (its context is cancelled) and runs record
// alone.
type MeasuringVU interface {
	RegisterMeasured() func(record func(), f func() error)
}

// InitEnv is what the init context offers modules.
type InitEnv struct {
	Registry *metrics.Registry
	// CWD is the folder of the script that is being initialised; open()
	// and require() resolve relative paths against the calling module's
	// folder, which the runtime tracks.
	CWD string
	// Shared holds data built once per process and shared by VUs
	// (SharedArray).
	Shared *Shared
	Logf   func(format string, args ...any)
	// Secrets are the run's --secret-source stores for k6/secrets; nil
	// when none were given.
	Secrets *secrets.Store
	// Run is what every VU of the run shares; State.Run is the same.
	Run *Run
}

// Run is the equipment every VU of a test run shares, for modules to
// reach the network, log and hand over samples exactly as the built-ins
// do. The VU's State and InitEnv both point to it.
type Run struct {
	// Dialer returns the dialer of VU vu's connections (0 outside a VU):
	// under the options hosts, blacklistIPs, blockHostnames and dns, from
	// the local address localIPs gives the VU, which a module's own
	// connections must honour as k6/http's do. Each call makes one. It
	// also has ResolveAddr(addr string) (net.IP, int, error), the address
	// it would dial for "host[:port]" (k6's lib.AddrResolver).
	Dialer func(vu uint64) Dialer
	// TLSConfig is the client TLS configuration the options give
	// (insecureSkipTLSVerify, tlsVersion, tlsCipherSuites, tlsAuth). It is
	// shared: Clone it before changing it.
	TLSConfig *tls.Config
	// Samples takes samples from any goroutine (see metrics.Inlet); on the
	// VU's goroutine State.Recorder is the cheaper way. nil outside a
	// test run (when a script's options are read, say).
	Samples *metrics.Inlet
	// Log writes to the run's log (--log-output, --log-format) at any
	// level; Debug reaches it only with --verbose.
	Log *slog.Logger
	// LookupEnv looks a variable up in metronome's own process
	// environment, which is not the script's __ENV (that has the -e
	// values too): for settings of the module's own, as k6's LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// Dialer opens network connections, as net.Dialer's method of the same
// name does.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// State is what a VU offers modules while it runs code outside the init
// context. Fields are only touched on the VU goroutine.
type State struct {
	Options *config.Options
	Builtin *metrics.Builtin
	// Registry holds every metric definition.
	Registry *metrics.Registry
	// Recorder is the VU's sample buffer behind a gate: once the current
	// iteration is interrupted (its context ended) it drops what it is
	// given, as k6 drops what is pushed on a done context. Samples of work
	// that ended before the interruption go through jsmod.Measured.
	Recorder metrics.Recorder
	// Tags are the tags every sample emitted now carries: run tags,
	// scenario tags, the scenario and group system tags and exec.vu.tags.
	// group() replaces them while its function runs.
	Tags *metrics.TagSet
	// Group is the current group path ("" at the root, "::a::b" nested;
	// "::setup" and "::teardown" in those functions, as in k6).
	Group string
	// DataSent and DataReceived add up the bytes the VU moved in the
	// current iteration (or setup, or teardown); the VU emits them as one
	// data_sent and one data_received sample with the iteration's tags
	// when it ends, as k6 does, and sets them back to zero.
	DataSent, DataReceived int64
	// Metadata is exec.vu.metrics.metadata, nil for none: k6/http's
	// --http-debug lines carry it as fields, as k6's do. It is replaced,
	// never changed in place.
	Metadata map[string]string
	// SystemTags says which system tags are enabled.
	SystemTags map[string]bool

	// VUID is __VU, VUIDInTest exec.vu.idInTest.
	VUID, VUIDInTest uint64
	// Iteration is __ITER.
	Iteration int64
	// IterationInScenario is exec.vu.iterationInScenario.
	IterationInScenario int64
	// Current is the iteration being run (zero in setup and teardown).
	Current executor.Iteration
	// Latency turns the current iteration's requests into
	// corrected_latency samples; modules record through
	// jsmod.RecordLatency. Zero (records nothing) in setup and teardown.
	Latency executor.Latency
	// Execution are the instance-wide counters.
	Execution *executor.State
	// Progress reports how far the current scenario is, from 0 to 1
	// (exec.scenario.progress); nil when unknown.
	Progress func() float64

	// Client is the VU's HTTP client: its own connection pool, so
	// connections are reused across iterations of this VU only. It is nil
	// until k6/http makes it, on the VU's first request; other modules
	// that need one may make it with k6/http's NewClient.
	Client *http.Client
	// Jar is the VU's cookie jar, reset each iteration unless
	// noCookiesReset.
	Jar http.CookieJar
	// RPS is the test-wide limit of the rps option that k6/http holds
	// every request to; nil when there is none. All VUs share it.
	RPS *ratelimit.Limiter

	// Abort aborts the whole test (exec.test.abort); Fail marks it failed
	// (exec.test.fail), logging msg.
	Abort func(reason string)
	Fail  func(msg string)
	Logf  func(format string, args ...any)
	// Run is what every VU of the run shares: the dialer, the TLS
	// configuration, the sample inlet, the log.
	Run *Run
}

// Shared is a process-wide store for data that VUs share.
type Shared struct {
	Get func(name string, build func() (any, error)) (any, error)
}

var (
	globalsMu sync.RWMutex
	globals   = map[string]Module{}
)

// RegisterGlobal makes a module's default export a global of every VU
// runtime under name, as WebCrypto's "crypto" is. The module is
// instantiated for a VU when its script first reads the name, so scripts
// that never use it pay nothing.
func RegisterGlobal(name string, m Module) {
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if _, dup := globals[name]; dup {
		panic("modules: global " + name + " registered twice")
	}
	globals[name] = m
}

// LookupGlobal returns the module registered as global name.
func LookupGlobal(name string) (Module, bool) {
	globalsMu.RLock()
	defer globalsMu.RUnlock()
	m, ok := globals[name]
	return m, ok
}

// GlobalNames lists the registered globals, sorted.
func GlobalNames() []string {
	globalsMu.RLock()
	defer globalsMu.RUnlock()
	names := make([]string, 0, len(globals))
	for n := range globals {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
