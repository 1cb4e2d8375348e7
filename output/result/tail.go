package result

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Tail reads a result file while its runner still writes it (metronome
// merge --wait): each Poll takes only the whole lines appended since the
// last, so watching a file costs what it grows by, not its size each time.
type Tail struct {
	path  string
	visit func(*Delta)
	// info is the file last polled: a different file at the path (its
	// runner began it anew) is read from its start.
	info os.FileInfo
	s    *scanner
	tot  totals
	// off counts the bytes of the whole lines taken; partial is what
	// follows them, a line still being written.
	off     int64
	partial []byte
	err     error
}

// NewTail follows the result file at path. visit, when not nil, is called
// with each series' aggregate of each interval as Scan calls it.
func NewTail(path string, visit func(*Delta)) *Tail {
	t := &Tail{path: path, visit: visit}
	t.restart()
	return t
}

func (t *Tail) restart() {
	t.s = newScanner(t.path, func(d *Delta) {
		t.tot.add(d)
		if t.visit != nil {
			t.visit(d)
		}
	})
	t.tot, t.off, t.partial, t.err = totals{}, 0, nil, nil
}

// Poll reads what was appended to the file since the last Poll. When the
// file is another one, or shorter than what was read (its runner began it
// anew), Poll reads nothing and reports restarted: what visit was given
// before no longer stands, and the next Poll reads the file from its
// start. An error is the file's (it cannot be opened, or a line is not a
// result file's) and stays until the file is begun anew.
func (t *Tail) Poll() (restarted bool, err error) {
	f, err := os.Open(t.path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	read := t.off + int64(len(t.partial))
	if t.info != nil && (!os.SameFile(t.info, info) || info.Size() < read) {
		t.restart()
		t.info = nil
		return true, nil
	}
	t.info = info
	if t.err != nil {
		return false, t.err
	}
	if _, err := f.Seek(read, io.SeekStart); err != nil {
		return false, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		raw, err := readLine(br, t.s.limit-len(t.partial))
		switch {
		case errors.Is(err, errLongLine):
			t.err = t.s.longLine()
			return false, t.err
		case errors.Is(err, io.EOF):
			t.partial = append(t.partial, raw...)
			return false, nil
		case err != nil:
			return false, fmt.Errorf("cannot read %s: %w", t.path, err)
		}
		line := raw
		if len(t.partial) > 0 {
			line, t.partial = append(t.partial, raw...), nil
		}
		t.off += int64(len(line))
		if _, t.err = t.s.line(line, false); t.err != nil {
			return false, t.err
		}
	}
}

// File returns what the file holds as far as Poll read it, as Read
// would if the file ended there; a line still being written makes it cut
// short. It shares its series' sinks with the tail: use it once the tail
// polls no more, or only for its Scanned.
func (t *Tail) File() (*File, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.s.n == 0 {
		return nil, t.s.empty()
	}
	sc := t.s.sc
	sc.truncate(t.path, len(t.partial) > 0)
	return t.tot.file(t.path, &sc), nil
}

// Finish takes what follows the last line break as the file's last line,
// as Read does, and returns the file. The tail is done: it polls no more.
func (t *Tail) Finish() (*File, error) {
	if t.err == nil {
		_, t.err = t.s.line(t.partial, true)
		t.partial = nil
	}
	if t.err != nil {
		return nil, t.err
	}
	return t.tot.file(t.path, &t.s.sc), nil
}
