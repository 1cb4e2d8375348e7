package result

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FollowPoll is how often Follower.Await looks at the files again.
const FollowPoll = time.Second

// Follower follows the result files of a merge while their runners may
// still write them (k6-operator starts the merge Job while its runners
// run): while Await waits, each look takes only what the runners appended
// since the last, and learns the files' structure (headers, metrics,
// ends) without their numbers, which the merge then reads a file at a
// time (Open). Its errors are one sentence naming the file at fault.
type Follower struct {
	args  []string
	tails map[string]*Tail
	// names are the files of the last look.
	names []string
}

// NewFollower follows the files args name: result files (or files to
// come), and directories of them.
func NewFollower(args []string) *Follower {
	return &Follower{args: args, tails: map[string]*Tail{}}
}

// IsResultFile reports whether the file at path begins as a result file.
func IsResultFile(path string) bool {
	f, err := OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(head[:n], []byte(`{"header":`))
}

// look reads what the files hold now, as far as they are written.
func (fw *Follower) look() ([]*File, error) {
	names, err := fw.resultFiles()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s holds no result files (written with -o result=FILE)", strings.Join(fw.args, ", "))
	}
	fw.names = names
	var files []*File
	for _, name := range names {
		tail := fw.follow(name)
		restarted, err := tail.Poll()
		if restarted {
			// Its runner began it anew: read it from its start.
			_, err = tail.Poll()
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot read %s: %v", name, pe.Err)
		}
		if err != nil {
			return nil, err
		}
		f, err := tail.File()
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// resultFiles lists the files args name: files as they are, and for a
// directory the result files in it (links to them included), sorted; a file already followed is
// known to be one without reading its head again.
func (fw *Follower) resultFiles() ([]string, error) {
	var files []string
	for _, a := range fw.args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err // its message repeats the name
			}
			return nil, fmt.Errorf("cannot read %s: %v", a, err)
		}
		for _, e := range entries {
			p := filepath.Join(a, e.Name())
			if regular(e, p) && (fw.tails[p] != nil || IsResultFile(p)) {
				files = append(files, p)
			}
		}
	}
	return files, nil
}

// regular reports whether the directory entry e, at p, is a regular file
// or a symbolic link to one (a shared volume may link its files): a FIFO
// or a device is never read as a result file.
func regular(e os.DirEntry, p string) bool {
	if e.Type()&os.ModeSymlink != 0 {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	return e.Type().IsRegular()
}

// follow returns the tail of the file name, begun at its first look.
func (fw *Follower) follow(name string) *Tail {
	t := fw.tails[name]
	if t == nil {
		t = NewTail(name)
		fw.tails[name] = t
	}
	return t
}

// finish reads the files of the last look to their ends: what follows a
// file's last line break is its last line. With waited set (the reading
// went on over several looks), a file without its end line that grew
// within the last two of its intervals (or polls) was still being
// written, and ended says when the reading stopped ("the wait (--wait
// 5m0s) ended"), which its note then says instead of a killed runner.
func (fw *Follower) finish(ended string, waited bool) ([]*File, error) {
	var files []*File
	for _, name := range fw.names {
		tail := fw.tails[name]
		grew := tail.Grew()
		f, err := tail.Finish()
		if err != nil {
			return nil, err
		}
		if iv, err := time.ParseDuration(f.Header.Interval); waited && f.End == nil && err == nil && time.Since(grew) < 2*max(FollowPoll, iv) {
			f.StillWritten(name, ended)
		}
		files = append(files, f)
	}
	return files, nil
}

// Open opens a file of the last look for reading its numbers, as far as
// the looks saw it.
func (fw *Follower) Open(f *File) (io.ReadCloser, error) {
	t := fw.tails[f.Name]
	if t == nil {
		return nil, fmt.Errorf("%s was not looked at", f.Name)
	}
	return t.Open()
}

// Await reads the files until they are complete and cover the test, or
// until wait has passed (0: once), and returns what it read last; the
// merge then says what is missing. Files of different tests, or whose
// segments overlap, and a file that is not a regular one end the wait at
// once: more time cannot mend them. A cancelled ctx ends the wait too.
func (fw *Follower) Await(ctx context.Context, wait time.Duration) ([]*File, error) {
	deadline := time.Now().Add(wait)
	ended := fmt.Sprintf("the wait (--wait %s) ended", wait)
	waited := false
	for {
		files, err := fw.look()
		if errors.Is(err, ErrNotRegular) {
			return nil, err
		}
		if err == nil {
			_, uerr := Union(files)
			switch {
			case uerr == nil && !slices.ContainsFunc(files, func(f *File) bool { return f.End == nil }):
				return fw.finish(ended, waited)
			case uerr != nil && !errors.Is(uerr, ErrGap):
				return fw.finish(ended, waited) // Merge refuses them in one sentence
			}
		}
		if wait <= 0 || !time.Now().Before(deadline) {
			if err != nil {
				return nil, err
			}
			return fw.finish(ended, waited)
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, err
			}
			return fw.finish("a signal stopped the wait", waited)
		case <-time.After(FollowPoll):
			waited = true
		}
	}
}
