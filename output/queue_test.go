package output

import (
	"sync"
	"testing"
)

// TestQueueDropsOldestButFinal fills a queue past its weight and checks
// that the oldest items that are not final go, counted with their values.
func TestQueueDropsOldestButFinal(t *testing.T) {
	q := NewQueue[string](10)
	q.Push("final-a", 4, 1, true)
	q.Push("b", 4, 2, false)
	q.Push("c", 4, 3, false) // 12 > 10: b goes
	q.Push("d", 6, 4, false) // 14 > 10: c goes, then 10 fits
	if items, values := q.Dropped(); items != 2 || values != 5 {
		t.Errorf("dropped %d items (%d values), want 2 (5)", items, values)
	}
	q.Close()
	var got []string
	for {
		v, _, ok := q.Pop()
		if !ok {
			break
		}
		got = append(got, v)
	}
	if len(got) != 2 || got[0] != "final-a" || got[1] != "d" {
		t.Errorf("popped %q, want [final-a d]", got)
	}
}

// TestQueueManySenders has several senders pop until Close and checks
// that every item is popped exactly once.
func TestQueueManySenders(t *testing.T) {
	q := NewQueue[int](1 << 20)
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				v, values, ok := q.Pop()
				if !ok {
					return
				}
				mu.Lock()
				seen[v] += values
				mu.Unlock()
			}
		})
	}
	const n = 1000
	for i := range n {
		q.Push(i, 1, 1, false)
	}
	q.Close()
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct items popped, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("item %d popped %d times", v, c)
		}
	}
}
