// Package extension is the registry through which JavaScript modules,
// executors and outputs plug into metronome. The built-ins register here
// exactly as a third-party Go module does: from an init function, pulled in
// by a blank import in a main package.
package extension

import (
	"fmt"
	"sort"
	"sync"
)

// Kind says what an extension provides.
type Kind int

// The kinds of extension.
const (
	// JSModule is a module importable from scripts, such as "k6/http" or
	// "k6/x/foo". Its value is the js package's module type.
	JSModule Kind = iota
	// Executor is a scenario executor. Its value is an executor.Type.
	Executor
	// Output is a results output selected with -o. Its value is an
	// output.Constructor.
	Output
)

func (k Kind) String() string {
	switch k {
	case JSModule:
		return "js module"
	case Executor:
		return "executor"
	case Output:
		return "output"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Extension is one registered extension.
type Extension struct {
	Kind  Kind
	Name  string
	Value any
}

var (
	mu       sync.RWMutex
	registry = map[Kind]map[string]*Extension{}
)

// Register adds an extension. It panics when the name is taken, because two
// extensions claiming one name is a build mistake that must not go unseen.
func Register(kind Kind, name string, value any) {
	mu.Lock()
	defer mu.Unlock()
	if registry[kind] == nil {
		registry[kind] = map[string]*Extension{}
	}
	if _, dup := registry[kind][name]; dup {
		panic(fmt.Sprintf("extension: %s %q registered twice", kind, name))
	}
	registry[kind][name] = &Extension{Kind: kind, Name: name, Value: value}
}

// Get returns the extension of the given kind and name.
func Get(kind Kind, name string) (*Extension, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := registry[kind][name]
	return e, ok
}

// Names lists the registered names of a kind, sorted.
func Names(kind Kind) []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry[kind]))
	for n := range registry[kind] {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
