// Package logtest collects what a component logs or prints, for tests
// that check its warnings and output.
package logtest

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers: a
// process's or a component's output, read while it still writes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

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
