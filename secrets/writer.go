package secrets

import (
	"bytes"
	"io"
	"sync"
)

// maxHeld bounds the unfinished line a Writer holds back: a line longer
// than this is redacted and written in pieces, at the risk of missing a
// secret cut in two at a piece's end. metronome writes no such line.
const maxHeld = 1 << 20

// Writer passes everything written to it on to an underlying writer with
// the secrets of its Store replaced by Mask. It is the one way metronome's
// messages leave the process: the terminal streams, the log file, the
// summary files, the outputs' files and the report all go through one.
//
// Secret values never hold a line break (a secrets file has one per
// line), so a Writer redacts whole lines and holds back an unfinished last
// line until its end arrives or Flush is called: a secret split between
// two writes is still found. While no secret has been fetched it holds
// nothing. It is safe for concurrent use: the log sink and an output may
// share standard output.
type Writer struct {
	s *Store
	w io.Writer

	mu   sync.Mutex
	held []byte
}

// Writer returns a Writer that hides s's secrets in what goes to w, or w
// itself when it already hides them, so that wrapping twice does not mask
// the mask. A nil Store gives a Writer that hides nothing.
func (s *Store) Writer(w io.Writer) *Writer {
	if rw, ok := w.(*Writer); ok && rw.s == s {
		return rw
	}
	return &Writer{s: s, w: w}
}

// Write writes p's complete lines, redacted, and holds back what follows
// the last line break. It reports len(p) when the underlying write
// succeeds, as the caller's bytes are all taken.
func (rw *Writer) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.held) == 0 && rw.s.replacer() == nil {
		return rw.w.Write(p)
	}
	rw.held = append(rw.held, p...)
	end := bytes.LastIndexAny(rw.held, "\r\n") + 1
	if len(rw.held) > maxHeld {
		end = len(rw.held)
	}
	if end == 0 {
		return len(p), nil
	}
	err := rw.emit(rw.held[:end])
	rw.held = rw.held[:copy(rw.held, rw.held[end:])]
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the line held back, if any, redacted.
func (rw *Writer) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.held) == 0 {
		return nil
	}
	err := rw.emit(rw.held)
	rw.held = rw.held[:0]
	return err
}

// emit writes b to the underlying writer with the secrets replaced, in
// one write, so that a line stays whole.
func (rw *Writer) emit(b []byte) error {
	_, err := rw.w.Write(rw.s.RedactBytes(b))
	return err
}

// RedactBytes returns b with every secret fetched so far replaced by Mask,
// for what is written in one piece (a summary file, the report).
func (s *Store) RedactBytes(b []byte) []byte {
	r := s.replacer()
	if r == nil {
		return b
	}
	return []byte(r.Replace(string(b)))
}

// Fd is the underlying writer's file descriptor, so that terminal
// detection sees through a Writer; ^uintptr(0), which is no descriptor,
// when it has none.
func (rw *Writer) Fd() uintptr {
	if f, ok := rw.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Unwrap returns the underlying writer, for what a caller needs of it
// beyond writing (the CLI's standard output bounds its writes once the
// test has ended).
func (rw *Writer) Unwrap() io.Writer { return rw.w }
