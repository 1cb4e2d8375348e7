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

// With of a pair the set holds is the set itself, whatever its place among
// the keys; another value replaces the pair, a new key is added in order.
func TestWithPairAlreadyHeld(t *testing.T) {
	s := EmptyTags.With("group", "").With("scenario", "default").With("a", "1")
	for _, p := range [][2]string{{"a", "1"}, {"group", ""}, {"scenario", "default"}} {
		if got := s.With(p[0], p[1]); got != s {
			t.Errorf("With(%q, %q) = %v (%p), want the set itself %v (%p)", p[0], p[1], got, got, s, s)
		}
	}
	if got, want := s.With("group", "::g").String(), "{a:1, group:::g, scenario:default}"; got != want {
		t.Errorf("replacing group gave %s, want %s", got, want)
	}
	if got, want := s.With("b", "2").String(), "{a:1, b:2, group:, scenario:default}"; got != want {
		t.Errorf("adding b gave %s, want %s", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { s.With("group", "") }); n != 0 {
		t.Errorf("With of a held pair allocated %.0f times", n)
	}
}
