package types

import (
	"fmt"
	"strings"
)

// HostnameTrie is a list of host name patterns, as blockHostnames takes
// them: a name, or a name starting with a * that stands for any beginning.
type HostnameTrie struct {
	patterns []string // lower case
}

// NewHostnameTrie returns the patterns of source, or an error naming the
// first one that is not a host name pattern.
func NewHostnameTrie(source []string) (*HostnameTrie, error) {
	t := &HostnameTrie{}
	for _, p := range source {
		p = strings.ToLower(p)
		if !validHostnamePattern(p) {
			return nil, fmt.Errorf("invalid hostname pattern '%s'", p)
		}
		t.patterns = append(t.patterns, p)
	}
	return t, nil
}

// Contains reports whether s, case aside, matches a pattern, and which:
// the name itself before any wildcard, else the longest wildcard that
// matches ("*.example.com" matches "a.example.com", not "example.com").
func (t *HostnameTrie) Contains(s string) (matchedPattern string, matchFound bool) {
	s = strings.ToLower(s)
	for _, p := range t.patterns {
		rest, wild := strings.CutPrefix(p, "*")
		switch {
		case !wild && p == s:
			return p, true
		case wild && strings.HasSuffix(s, rest) && len(p) > len(matchedPattern):
			matchedPattern, matchFound = p, true
		}
	}
	return matchedPattern, matchFound
}

// NullHostnameTrie is a HostnameTrie that may be unset.
type NullHostnameTrie struct {
	Trie  *HostnameTrie
	Valid bool
}

// validHostnamePattern reports whether p is an optional "*" or "*."
// followed by dot-separated labels of letters, digits and inner hyphens.
func validHostnamePattern(p string) bool {
	if rest, ok := strings.CutPrefix(p, "*"); ok {
		p = strings.TrimPrefix(rest, ".")
	}
	if p == "" {
		return true
	}
	for _, label := range strings.Split(p, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
