package js

import "slices"

// pairs is a map for the few entries a VU keeps: the modules it ran as
// functions, and each Go module's exports, raw or as JavaScript values. A
// VU holds a handful of entries in each, where a Go map costs about 200
// bytes even when it holds one and a slice of pairs costs 16–48 bytes an
// entry; every idle VU pays for them (BenchmarkVUHeap). Lookups scan, which
// at these sizes is as fast as hashing.
type pairs[K comparable, V any] []pair[K, V]

type pair[K comparable, V any] struct {
	key K
	val V
}

// index returns the position of k's entry, or -1.
func (p pairs[K, V]) index(k K) int {
	return slices.IndexFunc(p, func(e pair[K, V]) bool { return e.key == k })
}

// get returns the value stored for k.
func (p pairs[K, V]) get(k K) (V, bool) {
	if i := p.index(k); i >= 0 {
		return p[i].val, true
	}
	var zero V
	return zero, false
}

// set stores v for k.
func (p *pairs[K, V]) set(k K, v V) {
	if i := p.index(k); i >= 0 {
		(*p)[i].val = v
		return
	}
	*p = append(*p, pair[K, V]{k, v})
}

// delete removes k's entry; slices.Delete clears the freed slot, so the
// removed value is not kept alive.
func (p *pairs[K, V]) delete(k K) {
	if i := p.index(k); i >= 0 {
		*p = slices.Delete(*p, i, i+1)
	}
}
