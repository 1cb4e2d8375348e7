package metrics

import "sort"

// MaxBreakdownValues is how many values of its tag a breakdown keeps a sink
// for; the samples of further values are counted, not aggregated. A busy
// trend sink holds about 250 KB, so a script that puts a new name on every
// request (a URL with an ID in it) keeps bounded memory.
const MaxBreakdownValues = 50

// Breakdown asks the engine to aggregate a metric's samples per value of
// one of their tags as well: http_req_duration by name, for the summary's
// per-endpoint table. Samples without the tag are not broken down.
type Breakdown struct {
	Metric, Tag string
}

// TagSink is the sink of the samples of one tag value.
type TagSink struct {
	Value string
	Sink  Sink
}

// breakdownState is one breakdown of a metric: a sink per tag value, and
// per interned tag set the sink its samples go to.
type breakdownState struct {
	tag    string
	typ    Type
	sinks  map[string]Sink
	byTags map[*TagSet]Sink // nil entry: the set lacks the tag or came past the cap
	folded int64
	// last and lastSink are a one-entry cache in front of byTags.
	last     *TagSet
	lastSink Sink
}

func newBreakdownState(tag string, typ Type) *breakdownState {
	return &breakdownState{tag: tag, typ: typ, sinks: map[string]Sink{}, byTags: map[*TagSet]Sink{}}
}

// add aggregates s into the sink of its tag value.
func (b *breakdownState) add(s *Sample, tags *TagSet) {
	if sink := b.sinkFor(tags, 1); sink != nil {
		sink.Add(*s)
	}
}

// addSink merges src, the samples of one tag set, into the sink of its tag
// value.
func (b *breakdownState) addSink(src Sink, tags *TagSet) {
	if sink := b.sinkFor(tags, sinkCount(src)); sink != nil {
		MergeSink(sink, src)
	}
}

// sinkFor returns the sink of the tag value in tags, nil when tags lack
// the tag or their value came past the cap, in which case the n samples
// are counted as folded.
func (b *breakdownState) sinkFor(tags *TagSet, n int64) Sink {
	if tags == b.last && b.lastSink != nil {
		return b.lastSink
	}
	sink, ok := b.byTags[tags]
	if !ok {
		if v, has := tags.Get(b.tag); has {
			sink = b.sinks[v]
			if sink == nil && len(b.sinks) < MaxBreakdownValues {
				sink = NewSink(b.typ)
				b.sinks[v] = sink
			}
		}
		if len(b.byTags) >= maxTagCache {
			clear(b.byTags)
		}
		b.byTags[tags] = sink
	}
	if sink != nil {
		b.last, b.lastSink = tags, sink
		return sink
	}
	if _, has := tags.Get(b.tag); has {
		b.folded += n
	}
	return nil
}

// Breakdown returns the per-value sinks (copies, sorted by value) of the
// breakdown of metric, its tag, and how many samples carried a value past
// the MaxBreakdownValues first ones. ok is false when the engine has no
// such breakdown.
func (e *Engine) Breakdown(metric string) (tag string, parts []TagSink, folded int64, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	by, ok := e.breakdowns[metric]
	if !ok {
		return "", nil, 0, false
	}
	m := e.reg.Get(metric)
	if m == nil || m.ID >= len(e.states) || e.states[m.ID] == nil || e.states[m.ID].by == nil {
		return by, nil, 0, true
	}
	b := e.states[m.ID].by
	for v, s := range b.sinks {
		parts = append(parts, TagSink{Value: v, Sink: CloneSink(s)})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Value < parts[j].Value })
	return b.tag, parts, b.folded, true
}
