package metrics

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NewTags gives the set With builds from the same pairs, in any order,
// and interns that set alone: a reader of many distinct sets keeps one
// interned set for each, not one per pair of it.
func TestNewTagsInternsOneSet(t *testing.T) {
	if NewTags(nil) != EmptyTags || NewTags(map[string]string{}) != EmptyTags {
		t.Error("no pairs is not EmptyTags")
	}
	m := map[string]string{"scenario": "s", "name": "n-unique-7f3a", "method": "GET", "url": "u", "status": "200"}
	built := EmptyTags.With("url", "u").With("status", "200").With("method", "GET").With("scenario", "s").With("name", "n-unique-7f3a")
	if got := NewTags(m); got != built || got.String() != "{method:GET, name:n-unique-7f3a, scenario:s, status:200, url:u}" {
		t.Errorf("NewTags = %v (%p), With gives %v (%p)", got, got, built, built)
	}
	count := func(marker string) int {
		n := 0
		interned.Range(func(k, _ any) bool {
			if strings.Contains(k.(string), marker) {
				n++
			}
			return true
		})
		return n
	}
	var held []*TagSet // unreferenced sets may be collected (see below)
	for i := range 100 {
		held = append(held, NewTags(map[string]string{"a": "x", "b": "y", "name": "other-9c1e-" + strconv.Itoa(i), "z": "z"}))
	}
	if n := count("other-9c1e-"); n != 100 {
		t.Errorf("100 distinct sets interned %d sets holding their names, want 100", n)
	}
	runtime.KeepAlive(held)
}

// A set nothing refers to any more is collected and leaves the intern
// table; while something holds a set, its pairs give that set.
func TestInternedSetsAreCollected(t *testing.T) {
	held := NewTags(map[string]string{"name": "held-51d2"})
	for i := range 1000 {
		NewTags(map[string]string{"name": "dropped-51d2-" + strconv.Itoa(i)})
	}
	count := func(marker string) int {
		n := 0
		interned.Range(func(k, _ any) bool {
			if strings.Contains(k.(string), marker) {
				n++
			}
			return true
		})
		return n
	}
	// Cleanups run on their own goroutine after a collection.
	for try := 0; try < 100 && count("dropped-51d2-") > 0; try++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count("dropped-51d2-"); n != 0 {
		t.Errorf("%d of 1000 unreferenced sets are still interned", n)
	}
	if again := NewTags(map[string]string{"name": "held-51d2"}); again != held || count("held-51d2") != 1 {
		t.Errorf("a held set was not found again: %p, want %p", again, held)
	}
	runtime.KeepAlive(held)
}
