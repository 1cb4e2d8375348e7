// Package origin tells where code in the binary comes from: the Go module
// that holds a package, and the package whose init function is running.
// The layer uses it to name an extension's module and to give that
// module's types k6's field names.
package origin

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// ModuleOf returns the module of the binary that holds the package (or
// function) path: the one with the longest path that path begins with.
// A replaced module reports the replacement's version.
func ModuleOf(path string) (*debug.Module, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, false
	}
	var best *debug.Module
	for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		if m.Path == "" || !strings.HasPrefix(path, m.Path) {
			continue
		}
		if rest := path[len(m.Path):]; rest != "" && rest[0] != '/' && rest[0] != '.' {
			continue
		}
		if best == nil || len(m.Path) > len(best.Path) {
			best = m
		}
	}
	if best == nil {
		return nil, false
	}
	if best.Replace != nil && best.Replace.Version != "" {
		r := *best
		r.Version = best.Replace.Version
		return &r, true
	}
	return best, true
}

// InitPackage returns the import path of the package whose init function
// is on the caller's stack ("" when none is), so that a registration
// through the layer is attributed to the extension that made it.
func InitPackage() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		fn := f.Function
		slash := strings.LastIndexByte(fn, '/') + 1
		if dot := strings.IndexByte(fn[slash:], '.'); dot >= 0 {
			pkg, rest := fn[:slash+dot], fn[slash+dot+1:]
			if rest == "init" || strings.HasPrefix(rest, "init.") {
				return pkg
			}
		}
		if !more {
			return ""
		}
	}
}
