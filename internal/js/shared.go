package js

import "sync"

// sharedStore holds data built once per process and shared by every VU,
// such as SharedArray contents. The first VU to ask for a name builds it;
// the others wait and get the same value.
type sharedStore struct {
	mu    sync.Mutex
	items map[string]*sharedItem
}

type sharedItem struct {
	once sync.Once
	val  any
	err  error
}

func (s *sharedStore) get(name string, build func() (any, error)) (any, error) {
	s.mu.Lock()
	it, ok := s.items[name]
	if !ok {
		it = &sharedItem{}
		s.items[name] = it
	}
	s.mu.Unlock()
	it.once.Do(func() { it.val, it.err = build() })
	return it.val, it.err
}
