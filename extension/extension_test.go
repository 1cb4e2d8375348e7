package extension

import "testing"

// registeredInInit is registered from this test package's init function,
// through a wrapper, as output.Register and friends do.
const registeredInInit = "extension-test-init"

func register(name string) { Register(Output, name, 1) }

func init() { register(registeredInInit) }

func TestPackageIsTheRegisteringInitsPackage(t *testing.T) {
	e, ok := Get(Output, registeredInInit)
	if !ok {
		t.Fatal("not registered")
	}
	if want := "github.com/metronome-load/metronome/extension"; e.Package != want {
		t.Errorf("Package = %q, want %q", e.Package, want)
	}
	Register(Output, "extension-test-late", 2)
	late, _ := Get(Output, "extension-test-late")
	if late.Package != "" {
		t.Errorf("registered outside init: Package = %q, want empty", late.Package)
	}
}

func TestInitFuncPackage(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/ext/sub.init.0":   "example.com/ext/sub",
		"example.com/ext/sub.init":     "example.com/ext/sub",
		"example.com/e.x.t/v2.init.1":  "example.com/e.x.t/v2",
		"main.init.0":                  "main",
		"example.com/ext.register":     "",
		"example.com/ext.(*T).init":    "",
		"example.com/ext.initialise":   "",
		"example.com/ext.init.0.func1": "example.com/ext",
	} {
		got, ok := initFuncPackage(fn)
		if got != want || ok != (want != "") {
			t.Errorf("initFuncPackage(%q) = %q, %v; want %q", fn, got, ok, want)
		}
	}
}

func TestAllIsOrderedByKindThenName(t *testing.T) {
	Register(JSModule, "k6/x/extension-test-b", 0)
	Register(JSModule, "k6/x/extension-test-a", 0)
	all := All()
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Kind > b.Kind || (a.Kind == b.Kind && a.Name >= b.Name) {
			t.Fatalf("All()[%d:%d] = %s %q, %s %q: out of order", i-1, i+1, a.Kind, a.Name, b.Kind, b.Name)
		}
	}
	if len(all) < 4 {
		t.Fatalf("All() has %d extensions, want at least 4", len(all))
	}
}
