package js

// pairs is a map for the few entries a VU keeps: the modules it ran as
// functions, and each Go module's exports, raw and as JavaScript values. A
// VU holds a handful of entries in each, where a Go map costs about 200
// bytes even when it holds one and a slice of pairs costs 16–48 bytes an
// entry; every idle VU pays for them (BenchmarkVUHeap). Lookups scan, which
// at these sizes is as fast as hashing.
type pairs[K comparable, V any] []pair[K, V]

type pair[K comparable, V any] struct {
	key K
	val V
}

// get returns the value stored for k.
func (p pairs[K, V]) get(k K) (V, bool) {
	for i := range p {
		if p[i].key == k {
			return p[i].val, true
		}
	}
	var zero V
	return zero, false
}

// set stores v for k.
func (p *pairs[K, V]) set(k K, v V) {
	for i := range *p {
		if (*p)[i].key == k {
			(*p)[i].val = v
			return
		}
	}
	*p = append(*p, pair[K, V]{k, v})
}

// delete removes k's entry.
func (p *pairs[K, V]) delete(k K) {
	for i := range *p {
		if (*p)[i].key == k {
			*p = append((*p)[:i], (*p)[i+1:]...)
			return
		}
	}
}
