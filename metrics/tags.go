package metrics

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"weak"
)

// TagSet is an immutable, interned set of tags. Two TagSets with the same
// pairs are the same pointer, so a (metric, *TagSet) pair identifies a time
// series without hashing. The zero set is EmptyTags.
//
// Adding a tag with With is cached on the parent set, so building the same
// tags again (every HTTP request of an iteration, say) costs one lock-free
// map lookup per tag and no allocation.
type TagSet struct {
	keys []string // sorted
	vals []string
	key  string // canonical form, the interning key

	children sync.Map // tagPair -> *TagSet

	// series holds a bit per metric (its ID modulo 64) ingested with this
	// set, for SeriesSeen.
	series atomic.Uint64
}

type tagPair struct{ k, v string }

// interned maps a set's canonical form to a weak pointer to the set: a set
// nothing refers to any more is collected, and its entry deleted, so that
// a process that meets many distinct sets once each (an output read back
// with a URL per request) does not keep them all. While anything holds a
// set, its pairs give that set.
var interned sync.Map // canonical string -> weak.Pointer[TagSet]

// EmptyTags is the set with no tags.
var EmptyTags = &TagSet{}

// NewTags returns the interned set holding the pairs of m. Only that set
// is interned, not the sets of its first pairs that building it with
// With would intern too: a reader of many distinct sets (a URL per
// request in an output read back) keeps one set per distinct one.
func NewTags(m map[string]string) *TagSet {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return intern(keys, vals)
}

// With returns the set with key set to value, replacing any earlier value.
func (t *TagSet) With(key, value string) *TagSet {
	// A set that holds the pair already is the answer, and a binary
	// search of its few keys costs less than hashing the pair for the
	// cache: a VU adds group "" to its tags at every iteration's end.
	i := sort.SearchStrings(t.keys, key)
	has := i < len(t.keys) && t.keys[i] == key
	if has && t.vals[i] == value {
		return t
	}
	p := tagPair{key, value}
	if c, ok := t.children.Load(p); ok {
		return c.(*TagSet)
	}
	var keys, vals []string
	if has {
		keys = append([]string(nil), t.keys...)
		vals = append([]string(nil), t.vals...)
		vals[i] = value
	} else {
		keys = make([]string, 0, len(t.keys)+1)
		vals = make([]string, 0, len(t.keys)+1)
		keys = append(append(append(keys, t.keys[:i]...), key), t.keys[i:]...)
		vals = append(append(append(vals, t.vals[:i]...), value), t.vals[i:]...)
	}
	n := intern(keys, vals)
	c, _ := t.children.LoadOrStore(p, n)
	return c.(*TagSet)
}

// Without returns the set without key.
func (t *TagSet) Without(key string) *TagSet {
	i := sort.SearchStrings(t.keys, key)
	if i >= len(t.keys) || t.keys[i] != key {
		return t
	}
	keys := append(append([]string(nil), t.keys[:i]...), t.keys[i+1:]...)
	vals := append(append([]string(nil), t.vals[:i]...), t.vals[i+1:]...)
	return intern(keys, vals)
}

// Merge returns the set with every pair of o added, o winning on conflicts.
func (t *TagSet) Merge(o *TagSet) *TagSet {
	r := t
	for i, k := range o.keys {
		r = r.With(k, o.vals[i])
	}
	return r
}

func intern(keys, vals []string) *TagSet {
	if len(keys) == 0 {
		return EmptyTags
	}
	var b strings.Builder
	for i, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(vals[i])
		b.WriteByte(0)
	}
	key := b.String()
	if v, ok := interned.Load(key); ok {
		if s := v.(weak.Pointer[TagSet]).Value(); s != nil {
			return s
		}
	}
	s := &TagSet{keys: keys, vals: vals, key: key}
	wp := weak.Make(s)
	for {
		v, loaded := interned.LoadOrStore(key, wp)
		if loaded {
			old := v.(weak.Pointer[TagSet])
			if o := old.Value(); o != nil {
				return o
			}
			// The set it held was collected and its cleanup has not
			// run yet: take its place.
			if !interned.CompareAndSwap(key, old, wp) {
				continue
			}
		}
		runtime.AddCleanup(s, func(key string) { interned.CompareAndDelete(key, wp) }, key)
		return s
	}
}

// Get returns the value of key.
func (t *TagSet) Get(key string) (string, bool) {
	i := sort.SearchStrings(t.keys, key)
	if i < len(t.keys) && t.keys[i] == key {
		return t.vals[i], true
	}
	return "", false
}

// Len returns the number of tags.
func (t *TagSet) Len() int { return len(t.keys) }

// Range calls f for each pair in key order until f returns false.
func (t *TagSet) Range(f func(key, value string) bool) {
	for i, k := range t.keys {
		if !f(k, t.vals[i]) {
			return
		}
	}
}

// Map returns the tags as a new map.
func (t *TagSet) Map() map[string]string {
	m := make(map[string]string, len(t.keys))
	for i, k := range t.keys {
		m[k] = t.vals[i]
	}
	return m
}

// Contains reports whether every pair of sub is also in t.
func (t *TagSet) Contains(sub *TagSet) bool {
	for i, k := range sub.keys {
		if v, ok := t.Get(k); !ok || v != sub.vals[i] {
			return false
		}
	}
	return true
}

// String formats the set as {k:v, ...} in key order.
func (t *TagSet) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range t.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte(':')
		b.WriteString(t.vals[i])
	}
	b.WriteByte('}')
	return b.String()
}
