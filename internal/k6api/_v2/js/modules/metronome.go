package modules

import (
	"context"
	"fmt"
	"net/http/cookiejar"
	"net/url"
	"sync"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"

	mmod "github.com/metronome-load/metronome/js/modules"
	mhttp "github.com/metronome-load/metronome/js/modules/http"
	mm "github.com/metronome-load/metronome/metrics"

	"go.k6.io/k6/v2/internal/logger"
	"go.k6.io/k6/v2/internal/origin"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/metrics"
)

// This file plugs k6 modules into metronome: each registration becomes a
// metronome module whose instances see metronome's VU through k6's VU.

// metronomeModule is metronome's module path: its own types always keep
// metronome's field names.
const metronomeModule = "github.com/metronome-load/metronome"

// plugIn registers mod with metronome as name, and gives the types of the
// module that registered it k6's field names.
func plugIn(name string, mod any) {
	mmod.Register(name, &goModule{name: name, mod: mod})
	// k6/http's jar objects then carry the jar extensions read.
	mhttp.ExposeJars()
	useK6Names(origin.InitPackage())
}

var (
	namedMu sync.Mutex
	named   = map[string]bool{}
)

// useK6Names makes the runtime name the fields and methods of the types
// of pkg's module, and of this layer's, by k6's rule.
func useK6Names(pkg string) {
	namedMu.Lock()
	defer namedMu.Unlock()
	paths := []string{"go.k6.io/k6"}
	if pkg != "" {
		path := pkg
		if m, ok := origin.ModuleOf(pkg); ok {
			path = m.Path
		}
		paths = append(paths, path)
	}
	for _, p := range paths {
		if named[p] || p == metronomeModule || len(p) > len(metronomeModule) && p[:len(metronomeModule)+1] == metronomeModule+"/" {
			continue
		}
		named[p] = true
		mmod.UseFieldNames(p, common.FieldNameMapper{})
	}
}

// goModule is a k6 module as metronome's.
type goModule struct {
	name string
	mod  any
}

// ScopesCalls asks metronome to end the VU's Context with each setup,
// iteration and teardown, as k6 does: extensions stop the goroutines of a
// call with it (modules.CallScoped).
func (*goModule) ScopesCalls() {}

// Instantiate makes the module's instance for metronome's VU mvu.
func (m *goModule) Instantiate(mvu mmod.VU) (mmod.Exports, error) {
	v := &vu{m: mvu}
	var exp Exports
	own := false
	if mod, ok := m.mod.(Module); ok {
		inst := mod.NewModuleInstance(v)
		if inst == nil {
			return mmod.Exports{}, fmt.Errorf("module %s made no instance", m.name)
		}
		exp, own = inst.Exports(), true
	} else {
		exp.Default = m.mod
	}
	if exp.Named != nil {
		return mmod.Exports{Default: exp.Default, Named: exp.Named}, nil
	}
	named := map[string]any{}
	if exp.Default == nil {
		return mmod.Exports{Named: named}, nil
	}
	// Without named exports, the names are the default export's
	// properties: its own ones for an instance's, its keys for a plain
	// value registered as the module.
	rt := mvu.Runtime()
	obj := rt.ToValue(exp.Default).ToObject(rt)
	keys := obj.Keys()
	if own {
		keys = obj.GetOwnPropertyNames()
	}
	for _, k := range keys {
		named[k] = obj.Get(k)
	}
	return mmod.Exports{Default: obj, Named: named}, nil
}

// vu is metronome's VU as k6's.
type vu struct {
	m       mmod.VU
	initEnv *common.InitEnvironment
	state   *lib.State
}

func (v *vu) Context() context.Context             { return v.m.Context() }
func (v *vu) Runtime() *sobek.Runtime              { return v.m.Runtime() }
func (v *vu) RegisterCallback() func(func() error) { return v.m.RegisterCallback() }

// InitEnv is the init environment while metronome's VU runs its init
// context.
func (v *vu) InitEnv() *common.InitEnvironment {
	ie := v.m.InitEnv()
	if ie == nil {
		return nil
	}
	if v.initEnv == nil {
		p := partsOf(ie.Run)
		v.initEnv = &common.InitEnvironment{
			TestPreInitState: &lib.TestPreInitState{
				Registry:       metrics.MetronomeRegistry(ie.Registry),
				BuiltinMetrics: builtinOf(ie.Registry),
				LookupEnv:      p.lookupEnv,
				Logger:         p.logger,
			},
			CWD: &url.URL{Scheme: "file", Path: ie.CWD + "/"},
		}
	}
	return v.initEnv
}

// State is the VU's state from the first time metronome's VU runs setup,
// an iteration or teardown on: the same one every time, its counters
// brought up to date while the VU runs. Between and after iterations it
// is still there, as k6's VU keeps its State for its whole life, so that
// an extension's goroutine that outlives an iteration (xk6-tcp's read
// loop) still finds its tags and sample channel; nil only before, in the
// init context.
func (v *vu) State() *lib.State {
	st := v.m.State()
	if st == nil {
		return v.state
	}
	if v.state == nil {
		v.state = newState(v.m, st)
	}
	// Extensions call State from their own goroutines too: the counters
	// are written only when the VU has moved on.
	s := v.state
	if s.Iteration != st.Iteration {
		s.Iteration = st.Iteration
	}
	return s
}

// newState makes the k6 state of metronome's VU mvu, whose State st has
// the VU's address for its whole life: tags and iteration counters are
// read from it live. Its Samples and the connections of its Dialer go
// through the VU's inlet (modules.VUInlet), when the VU has one: pushed
// samples then follow the VU's gate and latency trends, and the dialer's
// bytes are the VU's data_sent and data_received, as k6's dialer counts
// them.
func newState(mvu mmod.VU, st *mmod.State) *lib.State {
	p := partsOf(st.Run)
	jar, _ := cookiejar.New(nil)
	s := &lib.State{
		VUID:           st.VUID,
		VUIDGlobal:     st.VUIDInTest,
		Iteration:      st.Iteration,
		Options:        p.options(st),
		BuiltinMetrics: builtinOf(st.Registry),
		Logger:         p.logger,
		CookieJar:      jar,
		BufferPool:     p.buffers,
		Tags: lib.MetronomeVUStateTags(
			func() *mm.TagSet { return st.Tags },
			func(t *mm.TagSet) { st.Tags = t },
			func(meta map[string]string) {
				if ms, ok := st.Recorder.(mm.MetadataSetter); ok {
					ms.SetMetadata(meta)
				}
			}),
		GetScenarioVUIter:       func() uint64 { return uint64(st.IterationInScenario) },
		GetScenarioLocalVUIter:  func() uint64 { return uint64(st.Current.LocalIndex) },
		GetScenarioGlobalVUIter: func() uint64 { return uint64(st.Current.Index) },
	}
	lib.SetMetronomeVU(s, mvu)
	if st.Run != nil {
		var vuIn *mmod.VUInlet
		if iv, ok := mvu.(mmod.InletVU); ok {
			vuIn = iv.Inlet()
		}
		s.TLSConfig = st.Run.TLSConfig
		if vuIn != nil {
			s.Dialer = netext.MetronomeDialer(st.Run.Dialer(st.VUID), vuIn.Count, s.Options)
			s.Samples = metrics.MetronomeSamples(st.Run.Samples, vuIn, st.Registry)
		} else {
			s.Dialer = netext.MetronomeDialer(st.Run.Dialer(st.VUID), nil, s.Options)
			s.Samples = metrics.MetronomeSamples(st.Run.Samples, nil, st.Registry)
		}
	} else {
		s.Samples = metrics.MetronomeSamples(nil, nil, nil)
	}
	return s
}

// runParts are the k6 views of a run's equipment, made once per run.
type runParts struct {
	logger    *logrus.Logger
	lookupEnv func(string) (string, bool)
	buffers   *lib.BufferPool

	optsOnce sync.Once
	opts     lib.Options
}

var parts sync.Map // *mmod.Run → *runParts

// partsOf returns the parts of run, made on first use.
func partsOf(run *mmod.Run) *runParts {
	if run == nil {
		run = &mmod.Run{}
	}
	if p, ok := parts.Load(run); ok {
		return p.(*runParts)
	}
	p := &runParts{logger: logger.New(run.Log), lookupEnv: run.LookupEnv, buffers: lib.NewBufferPool()}
	if p.lookupEnv == nil {
		p.lookupEnv = func(string) (string, bool) { return "", false }
	}
	actual, _ := parts.LoadOrStore(run, p)
	return actual.(*runParts)
}

// options are the run's options as k6's, converted once.
func (p *runParts) options(st *mmod.State) lib.Options {
	p.optsOnce.Do(func() { p.opts = lib.MetronomeOptions(st.Options) })
	return p.opts
}

var builtins sync.Map // *mm.Registry → *metrics.BuiltinMetrics

// builtinOf returns k6's built-in metrics in metronome's registry r,
// defined on first use.
func builtinOf(r *mm.Registry) *metrics.BuiltinMetrics {
	if r == nil {
		return nil
	}
	if b, ok := builtins.Load(r); ok {
		return b.(*metrics.BuiltinMetrics)
	}
	b, _ := builtins.LoadOrStore(r, metrics.RegisterBuiltinMetrics(metrics.MetronomeRegistry(r)))
	return b.(*metrics.BuiltinMetrics)
}
