// Package lib holds what k6 hands an extension about the VU it runs in:
// the VU's State (options, metrics, network equipment, sample channel,
// tags) and what the init context knows (TestPreInitState). metronome
// fills them from its own VU and run.
package lib

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/cookiejar"
	"sync"

	"github.com/sirupsen/logrus"

	mmod "github.com/metronome-load/metronome/js/modules"
	mhttp "github.com/metronome-load/metronome/js/modules/http"

	"go.k6.io/k6/v2/metrics"
)

// DialContexter dials with a context, as net.Dialer does.
type DialContexter interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// AddrResolver resolves a host (optionally with a port) under the test's
// network options, as the dialer would before connecting.
type AddrResolver interface {
	ResolveAddr(addr string) (net.IP, int, error)
}

// State is what a VU offers extensions while it runs code outside its init
// context: one per VU, from its first iteration on.
type State struct {
	// Options are the test's consolidated options.
	Options Options
	// BuiltinMetrics are k6's built-in metrics of the run.
	BuiltinMetrics *metrics.BuiltinMetrics
	// Logger writes to the run's log.
	Logger logrus.FieldLogger

	// Dialer opens connections under hosts, blacklistIPs and
	// blockHostnames; in metronome's VUs it is a *netext.Dialer, as in
	// k6's.
	Dialer DialContexter
	// Transport is nil: metronome's HTTP engine is not reached this way.
	Transport http.RoundTripper
	// CookieJar is the VU's own jar for extensions, not k6/http's.
	CookieJar *cookiejar.Jar
	// BufferPool lends byte buffers; every VU of a run has the same one.
	BufferPool *BufferPool
	// TLSConfig is the client TLS configuration of the options; clone it
	// before changing it.
	TLSConfig *tls.Config

	// Samples takes the samples the extension emits: send with
	// metrics.PushIfNotDone, from any goroutine.
	Samples chan<- metrics.SampleContainer

	// VUID is __VU, VUIDGlobal the VU's number in the whole test.
	VUID, VUIDGlobal uint64
	// Iteration is __ITER.
	Iteration int64

	// Tags are the tags and metadata of the samples emitted now.
	Tags *VUStateTags

	// GetScenarioVUIter returns the VU's iteration in the current
	// scenario; GetScenarioLocalVUIter the iteration's index among the
	// scenario's on this instance; GetScenarioGlobalVUIter its index in
	// the whole test.
	GetScenarioVUIter       func() uint64
	GetScenarioLocalVUIter  func() uint64
	GetScenarioGlobalVUIter func() uint64

	// mvu is metronome's VU whose State this is, requester its HTTP
	// engine for httpext.MakeRequest, made on first use (see
	// MetronomeRequester).
	mvu       mmod.VU
	requester *mhttp.Requester
}

// GetAddrResolver returns the dialer as an AddrResolver, nil when it is
// not one (metronome's dialer resolves as it dials).
func (s *State) GetAddrResolver() AddrResolver {
	r, _ := s.Dialer.(AddrResolver)
	return r
}

// VUStateTags are a VU's current tags and metadata, safe to read from any
// goroutine.
type VUStateTags struct {
	mu sync.RWMutex
	tm *metrics.TagsAndMeta
	// live, when set, reads the tags and metadata of metronome's VU and
	// set changes them (see MetronomeVUStateTags).
	live func() metrics.TagsAndMeta
	set  func(metrics.TagsAndMeta)
}

// NewVUStateTags returns tags that start as tags, with no metadata.
func NewVUStateTags(tags *metrics.TagSet) *VUStateTags {
	if tags == nil {
		panic("the metrics.TagSet must be initialized for creating a new lib.VUStateTags")
	}
	return &VUStateTags{tm: &metrics.TagsAndMeta{Tags: tags}}
}

// GetCurrentValues returns the tags and a copy of the metadata.
func (tg *VUStateTags) GetCurrentValues() metrics.TagsAndMeta {
	tg.mu.RLock()
	defer tg.mu.RUnlock()
	if tg.live != nil {
		return tg.live().Clone()
	}
	return tg.tm.Clone()
}

// Modify changes the tags and metadata through callback.
func (tg *VUStateTags) Modify(callback func(tagsAndMeta *metrics.TagsAndMeta)) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.live != nil {
		tm := tg.live().Clone()
		callback(&tm)
		tg.set(tm)
		return
	}
	callback(tg.tm)
}
