package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// Before BoundWrites a write waits for the reader as usual; the bytes
// arrive whole and in order.
func TestBoundedStdoutPassesWrites(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := newBoundedStdout(wf)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	var want bytes.Buffer
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KB: more than a pipe holds
	for i := range 4 {
		chunk[0] = byte('A' + i)
		want.Write(chunk)
		if n, err := w.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	wf.Close()
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Errorf("the reader got %d bytes, not the %d written in order", len(b), want.Len())
	}
}

// A write blocked on a reader that takes nothing ends once BoundWrites'
// patience has passed, and later writes fail at once.
func TestBoundedStdoutGivesUpAStuckReader(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer wf.Close()
	w := newBoundedStdout(wf)
	result := make(chan error, 1)
	go func() {
		_, err := w.Write(make([]byte, 1<<20)) // never read: blocks
		result <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-result:
		t.Fatalf("a 1 MB write to an unread pipe returned before any bound: %v", err)
	default:
	}
	w.BoundWrites(50 * time.Millisecond)
	select {
	case err := <-result:
		if !errors.Is(err, errStdoutGone) {
			t.Errorf("the blocked write returned %v, want errStdoutGone", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked write did not end after its 50ms patience")
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, errStdoutGone) {
		t.Errorf("a later write returned %v, want errStdoutGone at once", err)
	}
}
