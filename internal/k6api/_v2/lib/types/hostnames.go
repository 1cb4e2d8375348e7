package types

import (
	"fmt"
	"strings"

	"github.com/metronome-load/metronome/config"
)

// HostnameTrie is a list of host name patterns, as blockHostnames takes
// them: a name, or a name starting with a * that stands for any beginning.
// It checks and matches them by metronome's own rule (config), the one
// its dialer refuses connections by.
type HostnameTrie struct {
	patterns []string // lower case
}

// NewHostnameTrie returns the patterns of source, or an error naming the
// first one that is not a host name pattern.
func NewHostnameTrie(source []string) (*HostnameTrie, error) {
	t := &HostnameTrie{}
	for _, p := range source {
		p = strings.ToLower(p)
		if config.CheckHostnamePattern(p) != nil {
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
	return config.MatchHostname(t.patterns, s)
}

// NullHostnameTrie is a HostnameTrie that may be unset.
type NullHostnameTrie struct {
	Trie  *HostnameTrie
	Valid bool
}
