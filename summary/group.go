package summary

import (
	"strings"

	"github.com/metronome-load/metronome/metrics"
)

// GroupTree builds the group and check tree from group paths such as
// "::outer::inner" and the checks tallied in them.
func GroupTree(paths []string, checks []metrics.CheckTally) *Group {
	root := &Group{}
	byPath := map[string]*Group{"": root}
	var get func(path string) *Group
	get = func(path string) *Group {
		if g, ok := byPath[path]; ok {
			return g
		}
		i := strings.LastIndex(path, "::")
		parent := root
		name := path
		if i > 0 {
			parent = get(path[:i])
			name = path[i+2:]
		} else {
			name = strings.TrimPrefix(path, "::")
		}
		g := &Group{Name: name, Path: path}
		parent.Groups = append(parent.Groups, g)
		byPath[path] = g
		return g
	}
	for _, p := range paths {
		get(p)
	}
	for _, c := range checks {
		g := get(c.Group)
		g.Checks = append(g.Checks, &Check{Name: c.Name, Path: c.Group + "::" + c.Name, Passes: c.Passes, Fails: c.Fails})
	}
	return root
}
