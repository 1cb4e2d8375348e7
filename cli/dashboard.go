package cli

import (
	"slices"

	"github.com/metronome-load/metronome/output/dashboard"
)

// addWebDashboard adds the web-dashboard output when K6_WEB_DASHBOARD is
// true, as k6 does, unless -o already selects it.
func addWebDashboard(env map[string]string, outs []string) ([]string, error) {
	on, err := envBool(env, dashboard.EnvEnable)
	if err != nil || !on || slices.Contains(outs, dashboard.Name) {
		return outs, err
	}
	return append(slices.Clone(outs), dashboard.Name), nil
}
