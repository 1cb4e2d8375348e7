package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	mm "github.com/metronome-load/metronome/metrics"
)

// TagSet is an immutable set of tags: metronome's interned set, so that
// two sets with the same pairs are the same pointer and a TimeSeries can
// key a map. Grow one from Registry.RootTagSet or a VU's current tags.
type TagSet mm.TagSet

// set is the set as metronome's; nil is the empty set.
func (ts *TagSet) set() *mm.TagSet {
	if ts == nil {
		return mm.EmptyTags
	}
	return (*mm.TagSet)(ts)
}

// With returns the set with name set to value.
func (ts *TagSet) With(name, value string) *TagSet { return (*TagSet)(ts.set().With(name, value)) }

// Without returns the set without name.
func (ts *TagSet) Without(name string) *TagSet { return (*TagSet)(ts.set().Without(name)) }

// Get returns the value of name.
func (ts *TagSet) Get(name string) (string, bool) { return ts.set().Get(name) }

// Contains reports whether every pair of other is in the set.
func (ts *TagSet) Contains(other *TagSet) bool { return ts.set().Contains(other.set()) }

// IsEmpty reports whether the set has no tags.
func (ts *TagSet) IsEmpty() bool { return ts.set().Len() == 0 }

// Map returns the tags as a new map.
func (ts *TagSet) Map() map[string]string { return ts.set().Map() }

// WithTagsFromMap returns the set with every pair of m added.
func (ts *TagSet) WithTagsFromMap(m map[string]string) *TagSet {
	if len(m) == 0 {
		return ts
	}
	return (*TagSet)(ts.set().Merge(mm.NewTags(m)))
}

// MarshalJSON writes the tags as a JSON object.
func (ts *TagSet) MarshalJSON() ([]byte, error) { return MarshalJSONWithoutHTMLEscape(ts.Map()) }

// UnmarshalJSON refuses: a set is grown from another one, not read.
func (ts *TagSet) UnmarshalJSON([]byte) error {
	return errors.New("metrics.TagSet cannot be directly unmarshalled from JSON")
}

// MarshalJSONWithoutHTMLEscape is json.Marshal without the escaping of
// <, > and & that makes JSON safe inside HTML.
func MarshalJSONWithoutHTMLEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// TagsAndMeta are the tags and the metadata (values that are not indexed,
// such as vu and iter) of samples to be emitted.
type TagsAndMeta struct {
	Tags     *TagSet
	Metadata map[string]string
}

// SetTag sets a tag.
func (tm *TagsAndMeta) SetTag(key, value string) { tm.Tags = tm.Tags.With(key, value) }

// SetMetadata sets a metadata value.
func (tm *TagsAndMeta) SetMetadata(key, value string) {
	if tm.Metadata == nil {
		tm.Metadata = map[string]string{}
	}
	tm.Metadata[key] = value
}

// SetSystemTagOrMetaIfEnabled is SetSystemTagOrMeta when enabled has tag.
func (tm *TagsAndMeta) SetSystemTagOrMetaIfEnabled(enabled *SystemTagSet, tag SystemTag, value string) {
	if enabled.Has(tag) {
		tm.SetSystemTagOrMeta(tag, value)
	}
}

// SetSystemTagOrMeta sets a system tag, as metadata when it is one that
// is not indexed (vu, iter).
func (tm *TagsAndMeta) SetSystemTagOrMeta(tag SystemTag, value string) {
	if NonIndexableSystemTags.Has(tag) {
		tm.SetMetadata(tag.String(), value)
		return
	}
	tm.SetTag(tag.String(), value)
}

// DeleteTag removes a tag.
func (tm *TagsAndMeta) DeleteTag(key string) { tm.Tags = tm.Tags.Without(key) }

// DeleteMetadata removes a metadata value.
func (tm *TagsAndMeta) DeleteMetadata(key string) { delete(tm.Metadata, key) }

// Clone returns a copy whose metadata map is its own.
func (tm TagsAndMeta) Clone() TagsAndMeta {
	c := TagsAndMeta{Tags: tm.Tags}
	if tm.Metadata != nil {
		c.Metadata = make(map[string]string, len(tm.Metadata))
		for k, v := range tm.Metadata {
			c.Metadata[k] = v
		}
	}
	return c
}

// EnabledTags is a set of tag names.
type EnabledTags map[string]bool

// UnmarshalText adds the names of a comma-separated list.
func (i *EnabledTags) UnmarshalText(data []byte) error {
	if *i == nil {
		*i = EnabledTags{}
	}
	for _, name := range strings.Split(string(data), ",") {
		if name = strings.TrimSpace(name); name != "" {
			(*i)[name] = true
		}
	}
	return nil
}

// MarshalJSON writes the names as a sorted JSON list (null for a nil set).
func (i *EnabledTags) MarshalJSON() ([]byte, error) {
	if *i == nil {
		return []byte("null"), nil
	}
	names := make([]string, 0, len(*i))
	for name := range *i {
		names = append(names, name)
	}
	sort.Strings(names)
	return json.Marshal(names)
}

// UnmarshalJSON reads a JSON list of names.
func (i *EnabledTags) UnmarshalJSON(data []byte) error {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return err
	}
	m := EnabledTags{}
	for _, name := range names {
		m[name] = true
	}
	*i = m
	return nil
}
