// Package ext is k6's registry of extensions: what each registered, under
// which name, and from which Go module and version. Registering here only
// records; js/modules.Register (and, for outputs, output.RegisterExtension)
// also plug the extension into metronome.
package ext

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"

	"go.k6.io/k6/v2/internal/origin"
)

// ExtensionType is the kind of an extension.
type ExtensionType uint8

// The kinds of extension.
const (
	JSExtension ExtensionType = iota + 1
	OutputExtension
	SecretSourceExtension
	SubcommandExtension
)

// String names the kind as k6 prints it.
func (e ExtensionType) String() string {
	switch e {
	case JSExtension:
		return "js"
	case OutputExtension:
		return "output"
	case SecretSourceExtension:
		return "secret-source"
	case SubcommandExtension:
		return "subcommand"
	}
	return ""
}

// Extension is one registered extension.
type Extension struct {
	Name, Path, Version string
	Type                ExtensionType
	Module              any
}

// String is the extension as k6's version command lists it.
func (e Extension) String() string {
	return fmt.Sprintf("%s %s, %s [%s]", e.Path, e.Version, e.Name, e.Type)
}

var (
	mu       sync.RWMutex
	registry = map[ExtensionType]map[string]*Extension{
		JSExtension: {}, OutputExtension: {}, SecretSourceExtension: {}, SubcommandExtension: {},
	}
)

// Register records mod as the extension name of kind typ. A name taken
// twice, or an unknown kind, is a build mistake and panics.
func Register(name string, typ ExtensionType, mod any) {
	mu.Lock()
	defer mu.Unlock()
	byName, ok := registry[typ]
	if !ok {
		panic(fmt.Sprintf("unsupported extension type: %T", typ))
	}
	if _, dup := byName[name]; dup {
		panic(fmt.Sprintf("extension already registered: %s", name))
	}
	path, version := moduleOf(mod)
	byName[name] = &Extension{Name: name, Type: typ, Module: mod, Path: path, Version: version}
}

// Get returns a copy of the extensions of kind typ, by name.
func Get(typ ExtensionType) map[string]*Extension {
	mu.RLock()
	defer mu.RUnlock()
	byName, ok := registry[typ]
	if !ok {
		panic(fmt.Sprintf("unsupported extension type: %T", typ))
	}
	out := make(map[string]*Extension, len(byName))
	for k, v := range byName {
		out[k] = v
	}
	return out
}

// GetAll lists the JavaScript, output and subcommand extensions, by
// module path and then name.
func GetAll() []*Extension {
	mu.RLock()
	defer mu.RUnlock()
	var all []*Extension
	for _, typ := range []ExtensionType{JSExtension, OutputExtension, SubcommandExtension} {
		for _, e := range registry[typ] {
			all = append(all, e)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Path != all[j].Path {
			return all[i].Path < all[j].Path
		}
		return all[i].Name < all[j].Name
	})
	return all
}

// moduleOf finds the Go module that declares mod's type (or function) and
// its version in the binary's build information.
func moduleOf(mod any) (path, version string) {
	t := reflect.TypeOf(mod)
	if t == nil {
		return "", ""
	}
	switch t.Kind() {
	case reflect.Pointer:
		path = t.Elem().PkgPath()
	case reflect.Func:
		path = runtime.FuncForPC(reflect.ValueOf(mod).Pointer()).Name()
	default:
		path = t.PkgPath()
	}
	if path == "" {
		return "", ""
	}
	if m, ok := origin.ModuleOf(path); ok {
		return m.Path, m.Version
	}
	return path, ""
}
