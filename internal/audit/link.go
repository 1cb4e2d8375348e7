package audit

import (
	"cmp"
	"slices"
)

// linkTolerances are how far a request's start, computed back from its
// end and its own time, may fall before its iteration's start: first
// none but rounding, then a millisecond. k6's http_req_blocked of a new
// connection ends when the connection is handed over, while
// http_req_sending already began when the connection was made, so their
// sum counts that moment twice (measured: up to 0.16 ms); and k6 writes
// wall-clock times beside monotonic durations.
var linkTolerances = [...]int64{1_000, 1_000_000} // nanoseconds

// maxLinkWalk bounds the search, without vu metadata, for an iteration
// that was still running when a request ended, among those that started
// before it: more iterations than that overlapping one request means
// thousands of VUs, and the request is left unlinked.
const maxLinkWalk = 4096

// linker finds the iteration a request was made in. With k6's vu and iter
// metadata (--system-tags with vu and iter) the link is exact. With vu
// alone it is the VU's iteration that was running when the request was
// made. Without either it is an estimate: the iteration that started
// last before the request among those still running when it ended — the
// right one when each iteration sends its first request at its start, as
// most do, and at worst one that started a little later than the right
// one.
type linker struct {
	its []iteration // sorted by start
	// byKey indexes the iterations with vu and iter, sorted by them (4
	// bytes an iteration, where a map took some 70).
	byKey []int32
	byVU  map[int64][]int32 // indices into its, by start
	// Tallies of how the requests were linked.
	exact, byVUs, byTime, unlinked int64
}

func newLinker(its []iteration) *linker {
	l := &linker{its: its, byVU: map[int64][]int32{}}
	for i, it := range its {
		if it.vu >= 0 {
			l.byVU[it.vu] = append(l.byVU[it.vu], int32(i))
			if it.iter >= 0 {
				l.byKey = append(l.byKey, int32(i))
			}
		}
	}
	slices.SortStableFunc(l.byKey, func(x, y int32) int { return l.compareKey(x, l.its[y].vu, l.its[y].iter) })
	return l
}

// compareKey orders iteration i against the key (vu, iter).
func (l *linker) compareKey(i int32, vu, iter int64) int {
	return cmp.Or(cmp.Compare(l.its[i].vu, vu), cmp.Compare(l.its[i].iter, iter))
}

// find returns the index of q's iteration and whether there is one.
func (l *linker) find(q request) (int, bool) {
	if q.vu >= 0 && q.iter >= 0 {
		// The last of the iterations with the key, in start order, as
		// a map filled in that order would hold.
		k, _ := slices.BinarySearchFunc(l.byKey, q, func(i int32, q request) int {
			if c := l.compareKey(i, q.vu, q.iter); c != 0 {
				return c
			}
			return -1
		})
		if k > 0 && l.compareKey(l.byKey[k-1], q.vu, q.iter) == 0 {
			l.exact++
			return int(l.byKey[k-1]), true
		}
	}
	for _, tol := range linkTolerances {
		if i, ok := l.search(q, tol); ok {
			if q.vu >= 0 {
				l.byVUs++
			} else {
				l.byTime++
			}
			return i, true
		}
	}
	l.unlinked++
	return 0, false
}

// search looks for q's iteration by time: among q's VU's iterations when
// the output names it, else among all, the one that started last before
// q (give or take tol) and was still running when q ended.
func (l *linker) search(q request, tol int64) (int, bool) {
	start := q.end - int64(q.own) + tol
	if q.vu >= 0 {
		idx := l.byVU[q.vu]
		k, _ := slices.BinarySearchFunc(idx, start+1, func(i int32, t int64) int { return cmp.Compare(l.its[i].start, t) })
		if k > 0 && l.its[idx[k-1]].end >= q.end-tol {
			return int(idx[k-1]), true
		}
		return 0, false
	}
	k, _ := slices.BinarySearchFunc(l.its, start+1, func(it iteration, t int64) int { return cmp.Compare(it.start, t) })
	for j := k - 1; j >= 0 && j >= k-maxLinkWalk; j-- {
		if l.its[j].end >= q.end-tol {
			return j, true
		}
	}
	return 0, false
}

// account adds the tallies to the scenario's account.
func (l *linker) account(acc *ScenarioAudit) {
	acc.LinkedExact, acc.LinkedByVU, acc.LinkedByTime, acc.Unlinked = l.exact, l.byVUs, l.byTime, l.unlinked
}
