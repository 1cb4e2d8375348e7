// Package extension is the registry through which JavaScript modules,
// executors and outputs plug into metronome. The built-ins register here
// exactly as a third-party Go module does: from an init function, pulled in
// by a blank import in a main package.
package extension

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
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
	// Package is the import path of the package whose init function
	// registered the extension ("" when it was registered outside an init
	// function). `metronome version` maps it to the Go module that provides
	// the extension.
	Package string
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
	registry[kind][name] = &Extension{Kind: kind, Name: name, Value: value, Package: initPackage()}
}

// initPackage returns the import path of the package whose init function
// is on the caller's stack, so that registrations through wrappers such as
// output.Register are attributed to the extension's package, not the
// wrapper's.
func initPackage() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if pkg, ok := initFuncPackage(f.Function); ok {
			return pkg
		}
		if !more {
			return ""
		}
	}
}

// initFuncPackage reports whether fn, a fully qualified function name such
// as "example.com/ext/sub.init.0", is a package's init function, and
// returns that package's import path.
func initFuncPackage(fn string) (string, bool) {
	slash := strings.LastIndexByte(fn, '/') + 1
	dot := strings.IndexByte(fn[slash:], '.')
	if dot < 0 {
		return "", false
	}
	pkg, rest := fn[:slash+dot], fn[slash+dot+1:]
	if rest != "init" && !strings.HasPrefix(rest, "init.") {
		return "", false
	}
	return pkg, true
}

// Get returns the extension of the given kind and name.
func Get(kind Kind, name string) (*Extension, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := registry[kind][name]
	return e, ok
}

// All lists every registered extension, ordered by kind and then name.
func All() []*Extension {
	mu.RLock()
	defer mu.RUnlock()
	var all []*Extension
	for _, byName := range registry {
		for _, e := range byName {
			all = append(all, e)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Kind != all[j].Kind {
			return all[i].Kind < all[j].Kind
		}
		return all[i].Name < all[j].Name
	})
	return all
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
