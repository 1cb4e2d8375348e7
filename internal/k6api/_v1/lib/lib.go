// Package lib holds what k6 hands an extension about the VU it runs in
// (see go.k6.io/k6/v2/lib).
package lib

import (
	v2 "go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// DialContexter dials with a context.
type DialContexter = v2.DialContexter

// AddrResolver resolves a host under the test's network options.
type AddrResolver = v2.AddrResolver

// State is what a VU offers extensions outside its init context.
type State = v2.State

// VUStateTags are a VU's current tags and metadata.
type VUStateTags = v2.VUStateTags

// NewVUStateTags returns tags that start as tags, with no metadata.
func NewVUStateTags(tags *metrics.TagSet) *VUStateTags { return v2.NewVUStateTags(tags) }

// TestPreInitState is what the init context knows before any VU runs.
type TestPreInitState = v2.TestPreInitState

// Options are the test's consolidated options.
type Options = v2.Options

// IPNet is an address range of blacklistIPs.
type IPNet = v2.IPNet

// ParseCIDR reads a range in CIDR notation.
func ParseCIDR(s string) (*IPNet, error) { return v2.ParseCIDR(s) }

// BufferPool lends out byte buffers.
type BufferPool = v2.BufferPool

// NewBufferPool returns a pool that makes an empty buffer when it has none.
func NewBufferPool() *BufferPool { return v2.NewBufferPool() }
