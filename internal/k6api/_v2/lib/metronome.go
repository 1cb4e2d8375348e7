package lib

import (
	"net"

	"gopkg.in/guregu/null.v3"

	"github.com/metronome-load/metronome/config"
	mmod "github.com/metronome-load/metronome/js/modules"
	mhttp "github.com/metronome-load/metronome/js/modules/http"
	mm "github.com/metronome-load/metronome/metrics"

	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

// This file is metronome's, not k6's API: what the layer's other packages
// need to fill k6's types from metronome's.

// MetronomeOptions returns the options of metronome's consolidated o.
func MetronomeOptions(o *config.Options) Options {
	if o == nil {
		o = &config.Options{}
	}
	out := Options{
		VUs:        nullInt(o.VUs),
		Iterations: nullInt(o.Iterations),

		NoSetup:    nullBool(o.NoSetup),
		NoTeardown: nullBool(o.NoTeardown),

		RPS:          nullInt(o.RPS),
		MaxRedirects: nullInt(o.MaxRedirects),
		UserAgent:    nullString(o.UserAgent),
		Batch:        nullInt(o.Batch),
		BatchPerHost: nullInt(o.BatchPerHost),
		HTTPDebug:    nullString(o.HTTPDebug),

		InsecureSkipTLSVerify: nullBool(o.InsecureSkipTLSVerify),
		Throw:                 nullBool(o.Throw),

		NoConnectionReuse:   nullBool(o.NoConnectionReuse),
		NoVUConnectionReuse: nullBool(o.NoVUConnectionReuse),

		SummaryTrendStats: o.SummaryTrendStats,
		SummaryTimeUnit:   nullString(o.SummaryTimeUnit),
		RunTags:           o.Tags,

		NoCookiesReset:        nullBool(o.NoCookiesReset),
		DiscardResponseBodies: nullBool(o.DiscardResponseBodies),
	}
	if o.MaxRedirects == nil {
		// Unset, as k6's consolidated options have it: 10, not Valid.
		out.MaxRedirects = null.NewInt(10, false)
	}
	if o.Duration != nil {
		out.Duration = types.NullDurationFrom(o.Duration.Std())
	}
	if o.SetupTimeout != nil {
		out.SetupTimeout = types.NullDurationFrom(o.SetupTimeout.Std())
	}
	if o.TeardownTimeout != nil {
		out.TeardownTimeout = types.NullDurationFrom(o.TeardownTimeout.Std())
	}
	if o.HandleSummaryTimeout != nil {
		out.HandleSummaryTimeout = types.NullDurationFrom(o.HandleSummaryTimeout.Std())
	}
	if o.MinIterationDuration != nil {
		out.MinIterationDuration = types.NullDurationFrom(o.MinIterationDuration.Std())
	}
	tags := o.SystemTags
	if tags == nil {
		tags = config.DefaultSystemTags
	}
	out.SystemTags = metrics.ToSystemTagSet(tags)
	for _, r := range o.BlacklistIPs {
		if _, n, err := net.ParseCIDR(r); err == nil {
			out.BlacklistIPs = append(out.BlacklistIPs, &IPNet{IPNet: *n})
		}
	}
	if len(o.BlockHostnames) > 0 {
		// The patterns were checked when the options were read.
		if t, err := types.NewHostnameTrie(o.BlockHostnames); err == nil {
			out.BlockedHostnames = types.NullHostnameTrie{Trie: t, Valid: true}
		}
	}
	if len(o.Thresholds) > 0 {
		out.Thresholds = make(map[string]metrics.Thresholds, len(o.Thresholds))
		for name, list := range o.Thresholds {
			ts := metrics.Thresholds{Thresholds: make([]*metrics.Threshold, len(list))}
			for i, t := range list {
				th := &metrics.Threshold{Source: t.Source, AbortOnFail: t.AbortOnFail}
				if t.DelayAbortEval != nil {
					th.AbortGracePeriod = types.NullDurationFrom(t.DelayAbortEval.Std())
				}
				ts.Thresholds[i] = th
			}
			out.Thresholds[name] = ts
		}
	}
	return out
}

func nullInt(p *int64) null.Int {
	if p == nil {
		return null.Int{}
	}
	return null.IntFrom(*p)
}

func nullBool(p *bool) null.Bool {
	if p == nil {
		return null.Bool{}
	}
	return null.BoolFrom(*p)
}

func nullString(p *string) null.String {
	if p == nil {
		return null.String{}
	}
	return null.StringFrom(*p)
}

// MetronomeVUStateTags returns the tags of metronome's VU whose State st
// returns: read live from it, and changed in it (its tags, and the
// metadata of the samples its recorder takes) by Modify. Call Modify on
// the VU's goroutine.
func MetronomeVUStateTags(st func() *mm.TagSet, setTags func(*mm.TagSet), setMeta func(map[string]string)) *VUStateTags {
	var meta map[string]string
	return &VUStateTags{
		live: func() metrics.TagsAndMeta {
			return metrics.TagsAndMeta{Tags: (*metrics.TagSet)(st()), Metadata: meta}
		},
		set: func(tm metrics.TagsAndMeta) {
			setTags((*mm.TagSet)(tm.Tags))
			meta = tm.Metadata
			setMeta(meta)
		},
	}
}

// SetMetronomeVU ties s to metronome's VU vu, whose HTTP engine
// httpext.MakeRequest then sends s's requests with.
func SetMetronomeVU(s *State, vu mmod.VU) { s.mvu = vu }

// MetronomeRequester returns the HTTP engine of the VU s belongs to, made
// on first use; nil when s is not a State metronome made. Call it on the
// VU's goroutine.
func MetronomeRequester(s *State) *mhttp.Requester {
	if s.requester == nil && s.mvu != nil {
		s.requester = mhttp.NewRequester(s.mvu)
	}
	return s.requester
}
