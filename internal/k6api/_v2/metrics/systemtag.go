package metrics

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// SystemTag is one of the tags the runtime itself sets on samples.
type SystemTag uint32

// SystemTagSet is a set of system tags, one bit each.
type SystemTagSet SystemTag

// The system tags, each its own bit, in k6's order.
const (
	TagProto SystemTag = 1 << iota
	TagSubproto
	TagStatus
	TagMethod
	TagURL
	TagName
	TagGroup
	TagCheck
	TagError
	TagErrorCode
	TagTLSVersion
	TagScenario
	TagService
	TagExpectedResponse
	TagIter
	TagVU
	TagOCSPStatus
	TagIP
)

// systemTagNames are the tags' names, bit by bit.
var systemTagNames = []string{
	"proto", "subproto", "status", "method", "url", "name", "group", "check", "error", "error_code",
	"tls_version", "scenario", "service", "expected_response", "iter", "vu", "ocsp_status", "ip",
}

// DefaultSystemTagSet are the system tags enabled by default: all but
// iter, vu, ocsp_status and ip.
var DefaultSystemTagSet = SystemTagSet(TagProto | TagSubproto | TagStatus | TagMethod | TagURL | TagName | TagGroup |
	TagCheck | TagError | TagErrorCode | TagTLSVersion | TagScenario | TagService | TagExpectedResponse)

// NonIndexableSystemTags are set as metadata rather than as tags.
var NonIndexableSystemTags = SystemTagSet(TagIter | TagVU)

// String is the tag's name.
func (i SystemTag) String() string {
	for b, name := range systemTagNames {
		if i == 1<<b {
			return name
		}
	}
	return fmt.Sprintf("SystemTag(%d)", uint32(i))
}

// SystemTagString returns the system tag named s.
func SystemTagString(s string) (SystemTag, error) {
	for b, name := range systemTagNames {
		if name == s {
			return SystemTag(1 << b), nil
		}
	}
	return 0, fmt.Errorf("%s does not belong to SystemTag values", s)
}

// SystemTagValues lists every system tag.
func SystemTagValues() []SystemTag {
	tags := make([]SystemTag, len(systemTagNames))
	for b := range systemTagNames {
		tags[b] = 1 << b
	}
	return tags
}

// Add adds tag to the set.
func (i *SystemTagSet) Add(tag SystemTag) {
	if i != nil {
		*i |= SystemTagSet(tag)
	}
}

// Has reports whether tag is in the set; a nil set has none.
func (i *SystemTagSet) Has(tag SystemTag) bool {
	return i != nil && *i&SystemTagSet(tag) != 0
}

// Map returns the names of the set's tags.
func (i SystemTagSet) Map() EnabledTags {
	m := EnabledTags{}
	for _, tag := range SystemTagValues() {
		if i.Has(tag) {
			m[tag.String()] = true
		}
	}
	return m
}

// SetString lists the set's names, comma-separated.
func (i SystemTagSet) SetString() string {
	var names []string
	for _, tag := range SystemTagValues() {
		if i.Has(tag) {
			names = append(names, tag.String())
		}
	}
	return strings.Join(names, ",")
}

// ToSystemTagSet returns the set of the named tags; unknown names are
// left out.
func ToSystemTagSet(tags []string) *SystemTagSet {
	set := new(SystemTagSet)
	for _, name := range tags {
		if tag, err := SystemTagString(name); err == nil {
			set.Add(tag)
		}
	}
	return set
}

// NewSystemTagSet returns the set of tags.
func NewSystemTagSet(tags ...SystemTag) *SystemTagSet {
	set := new(SystemTagSet)
	for _, tag := range tags {
		set.Add(tag)
	}
	return set
}

// MarshalJSON writes the set as a sorted JSON list of names.
func (i *SystemTagSet) MarshalJSON() ([]byte, error) {
	var names []string
	for _, tag := range SystemTagValues() {
		if i.Has(tag) {
			names = append(names, tag.String())
		}
	}
	sort.Strings(names)
	return json.Marshal(names)
}

// UnmarshalJSON reads a JSON list of names; an empty list keeps the set.
func (i *SystemTagSet) UnmarshalJSON(data []byte) error {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return err
	}
	if len(names) > 0 {
		*i = *ToSystemTagSet(names)
	}
	return nil
}

// UnmarshalText adds the tags of a comma-separated list of names;
// unknown names are left out.
func (i *SystemTagSet) UnmarshalText(data []byte) error {
	for _, name := range strings.Split(string(data), ",") {
		if tag, err := SystemTagString(strings.TrimSpace(name)); err == nil {
			i.Add(tag)
		}
	}
	return nil
}
