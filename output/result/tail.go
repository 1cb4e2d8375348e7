package result

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Tail looks at a result file while its runner still writes it (metronome
// merge --wait): each Poll takes only the whole lines appended since the
// last, so watching a file costs what it grows by, not its size each time.
// It learns the file's structure — header, metrics, series, intervals,
// end — without decoding the intervals' entries or keeping any total:
// Open reads the file again, as far as the tail saw it, for its numbers.
type Tail struct {
	path string
	// info is the file last polled: a different file at the path (its
	// runner began it anew) is read from its start.
	info os.FileInfo
	s    *scanner
	// off counts the bytes of the whole lines taken; partial is what
	// follows them, a line still being written.
	off     int64
	partial []byte
	err     error
	// grew is when a Poll last found the file longer.
	grew time.Time
}

// NewTail follows the result file at path.
func NewTail(path string) *Tail {
	t := &Tail{path: path}
	t.restart()
	return t
}

func (t *Tail) restart() {
	t.s = newScanner(t.path, nil)
	t.off, t.partial, t.err = 0, nil, nil
}

// Poll reads what was appended to the file since the last Poll. When the
// file is another one, or shorter than what was read (its runner began it
// anew), Poll reads nothing and reports restarted: what visit was given
// before no longer stands, and the next Poll reads the file from its
// start. An error is the file's (it cannot be opened, or a line is not a
// result file's) and stays until the file is begun anew.
func (t *Tail) Poll() (restarted bool, err error) {
	f, err := OpenRegular(t.path)
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
	if info.Size() > read {
		t.grew = time.Now()
	}
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

// Grew is when a Poll last found the file longer than the Poll before:
// its runner was writing it then. Zero when no Poll did.
func (t *Tail) Grew() time.Time { return t.grew }

// File returns what the file holds as far as Poll read it, as Scan
// would if the file ended there; a line still being written makes it cut
// short.
func (t *Tail) File() (*File, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.s.n == 0 {
		return nil, t.s.empty()
	}
	sc := t.s.sc
	sc.truncate(t.path, len(t.partial) > 0)
	return &File{Name: t.path, Scanned: sc}, nil
}

// Finish takes what follows the last line break as the file's last line,
// as Read does, and returns the file. The tail is done: it polls no more.
func (t *Tail) Finish() (*File, error) {
	if t.err == nil {
		_, t.err = t.s.line(t.partial, true)
		t.off += int64(len(t.partial))
		t.partial = nil
	}
	if t.err != nil {
		return nil, t.err
	}
	f := &File{Name: t.path, Scanned: t.s.sc}
	// What the look kept of the series is not needed any more: a merge
	// of many files keeps many finished tails.
	t.s = newScanner(t.path, nil)
	t.err = errFinished
	return f, nil
}

// errFinished is what a tail answers after Finish.
var errFinished = errors.New("the tail is finished")

// Open opens the file for reading its numbers (Scan), as far as the tail
// saw it: the bytes Poll read, the last line Finish took included. It
// refuses a file that is no longer the one the tail saw, or shorter.
func (t *Tail) Open() (io.ReadCloser, error) {
	f, err := OpenRegular(t.path)
	if err != nil {
		return nil, err
	}
	seen := t.off + int64(len(t.partial))
	info, err := f.Stat()
	if err == nil && (t.info == nil || !os.SameFile(t.info, info) || info.Size() < seen) {
		err = fmt.Errorf("%s changed while it was merged (another file at its path, or shorter)", t.path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, seen), f}, nil
}

// OpenRegular opens the file at path for reading if it is a regular
// file, and refuses anything else at once: opening a named pipe waits for
// a writer, which may never come (merge --wait would hang past its wait).
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = notRegular(fmt.Sprintf("%s is %s, not a regular file: results are read from files (- reads standard input)", path, describeMode(info.Mode())))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrNotRegular is what OpenRegular's error is for a file that is not a
// regular one: waiting does not mend it.
var ErrNotRegular = errors.New("not a regular file")

// notRegular is OpenRegular's error for a file that is not a regular one.
type notRegular string

func (e notRegular) Error() string        { return string(e) }
func (e notRegular) Is(target error) bool { return target == ErrNotRegular }

// describeMode names a file type that is not a regular file's.
func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
