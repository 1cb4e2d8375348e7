// Package logtest collects what a component logs, for tests that check
// its warnings.
package logtest

import (
	"fmt"
	"strings"
	"sync"
)

// Lines collects formatted log lines; it is safe for concurrent use, and
// its Logf fits every Logf field of the project.
type Lines struct {
	mu    sync.Mutex
	lines []string
}

// Logf appends one line.
func (l *Lines) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// String returns the lines so far, one per line.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
