// Package types holds k6's duration types (see go.k6.io/k6/v2/lib/types).
package types

import (
	"time"

	v2 "go.k6.io/k6/v2/lib/types"
)

// Duration is a time.Duration in k6's syntax.
type Duration = v2.Duration

// NullDuration is a Duration that may be unset.
type NullDuration = v2.NullDuration

// NewNullDuration returns d, set when valid.
func NewNullDuration(d time.Duration, valid bool) NullDuration { return v2.NewNullDuration(d, valid) }

// NullDurationFrom returns d, set.
func NullDurationFrom(d time.Duration) NullDuration { return v2.NullDurationFrom(d) }

// ParseExtendedDuration reads a duration in k6's syntax.
func ParseExtendedDuration(data string) (time.Duration, error) { return v2.ParseExtendedDuration(data) }

// GetDurationValue reads a duration from a Go or JavaScript value.
func GetDurationValue(v any) (time.Duration, error) { return v2.GetDurationValue(v) }

// HostnameTrie is a list of host name patterns, as blockHostnames takes them.
type HostnameTrie = v2.HostnameTrie

// NullHostnameTrie is a HostnameTrie that may be unset.
type NullHostnameTrie = v2.NullHostnameTrie

// NewHostnameTrie returns the patterns of source, or an error naming the
// first one that is not a host name pattern.
func NewHostnameTrie(source []string) (*HostnameTrie, error) { return v2.NewHostnameTrie(source) }
