// Package extresolve knows which Go module provides each `k6/x/NAME`
// module a script may import, finds the ones a script needs, and works out
// the `metronome build` that provides them: the words of the error a
// binary without the module gives, and the build that automatic extension
// resolution (K6_AUTO_EXTENSION_RESOLUTION) runs and caches.
//
// The table is metronome's own, written from the facts of k6's extension
// registry (grafana/k6-extension-registry, registry.yaml for the k6 v1 line
// and registry-v2.yaml for v2): each extension's JavaScript import paths,
// its module, its tier and the versions the registry lists. metronome
// builds extensions on both k6 module paths, so the versions of both files
// are kept. Extensions that add only subcommands (agent, explore, docs,
// mcp, httpbin) import nothing from a script and are left out.
package extresolve

import (
	"slices"

	"github.com/Masterminds/semver/v3"
)

// Extension is one module of the registry.
type Extension struct {
	// Import is the path a script imports, "k6/x/NAME".
	Import string
	// Module is the Go module that registers it.
	Module string
	// Tier is "official" or "community", as the registry classes it.
	Tier string
	// Versions are the module versions the registry lists, oldest first.
	Versions []string
}

// Latest is the newest version the registry lists.
func (e Extension) Latest() string { return e.Versions[len(e.Versions)-1] }

// registry is the table, as of grafana/k6-extension-registry 274627a.
var registry = []Extension{
	// Official.
	{"k6/x/dns", "github.com/grafana/xk6-dns", "official", []string{"v1.0.0", "v1.0.1", "v1.1.0", "v1.1.2"}},
	{"k6/x/faker", "github.com/grafana/xk6-faker", "official", []string{"v0.4.0", "v0.4.1", "v0.4.2", "v0.4.3", "v0.4.4", "v0.5.0", "v0.5.2"}},
	{"k6/x/icmp", "github.com/grafana/xk6-icmp", "official", []string{"v0.1.0", "v0.2.0", "v0.3.0", "v0.3.2"}},
	{"k6/x/mqtt", "github.com/grafana/xk6-mqtt", "official", []string{"v0.1.1", "v0.2.0", "v0.3.0"}},
	{"k6/x/redis", "github.com/grafana/xk6-redis", "official", []string{"v0.3.6", "v0.4.0", "v0.4.2"}},
	{"k6/x/sql", "github.com/grafana/xk6-sql", "official", []string{"v1.0.0", "v1.0.1", "v1.0.2", "v1.0.3", "v1.0.4", "v1.0.5", "v1.1.0", "v1.2.0"}},
	{"k6/x/sql/driver/mysql", "github.com/grafana/xk6-sql-driver-mysql", "official", []string{"v0.1.0", "v0.2.0", "v0.2.1", "v0.3.0", "v0.4.0"}},
	{"k6/x/sql/driver/postgres", "github.com/grafana/xk6-sql-driver-postgres", "official", []string{"v0.1.0", "v0.1.1", "v0.2.0", "v0.3.0"}},
	{"k6/x/ssh", "github.com/grafana/xk6-ssh", "official", []string{"v0.1.0", "v0.1.1", "v0.1.2", "v0.1.3", "v0.2.0", "v0.2.2"}},
	{"k6/x/tcp", "github.com/grafana/xk6-tcp", "official", []string{"v0.2.0", "v0.3.0"}},
	// Community.
	{"k6/x/remotewrite", "github.com/grafana/xk6-client-prometheus-remote", "community", []string{"v0.3.2"}},
	{"k6/x/tracing", "github.com/grafana/xk6-client-tracing", "community", []string{"v0.0.9"}},
	{"k6/x/disruptor", "github.com/grafana/xk6-disruptor", "community", []string{"v0.3.17"}},
	{"k6/x/kafka", "github.com/mostafa/xk6-kafka", "community", []string{"v1.0.0"}},
	{"k6/x/kubernetes", "github.com/grafana/xk6-kubernetes", "community", []string{"v0.10.3", "v0.12.0"}},
	{"k6/x/loki", "github.com/grafana/xk6-loki", "community", []string{"v1.0.0", "v1.0.1"}},
	{"k6/x/sql/driver/azuresql", "github.com/grafana/xk6-sql-driver-azuresql", "community", []string{"v0.1.0", "v0.1.1"}},
	{"k6/x/sql/driver/clickhouse", "github.com/grafana/xk6-sql-driver-clickhouse", "community", []string{"v0.1.0", "v0.1.1"}},
	{"k6/x/sql/driver/sqlserver", "github.com/grafana/xk6-sql-driver-sqlserver", "community", []string{"v0.1.0", "v0.1.1"}},
	{"k6/x/sse", "github.com/phymbert/xk6-sse", "community", []string{"v0.1.10", "v0.1.11"}},
	{"k6/x/tls", "github.com/grafana/xk6-tls", "community", []string{"v0.1.0"}},
	{"k6/x/msgpack", "github.com/tango-tango/xk6-msgpack", "community", []string{"v0.0.3"}},
}

// Lookup finds the extension that provides the import path spec.
func Lookup(spec string) (Extension, bool) {
	i := slices.IndexFunc(registry, func(e Extension) bool { return e.Import == spec })
	if i < 0 {
		return Extension{}, false
	}
	return registry[i], true
}

// Pick is the newest listed version that satisfies c (any version when c
// is nil), and whether there is one.
func (e Extension) Pick(c *semver.Constraints) (string, bool) {
	for i := len(e.Versions) - 1; i >= 0; i-- {
		v, err := semver.NewVersion(e.Versions[i])
		if err == nil && (c == nil || c.Check(v)) {
			return e.Versions[i], true
		}
	}
	return "", false
}
