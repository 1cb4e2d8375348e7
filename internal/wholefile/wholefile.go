// Package wholefile writes the files metronome hands its users — the
// summary export, handleSummary's files, reports, archives — so that each
// exists whole or not at all: the bytes go to a temporary file in the same
// directory, which is renamed over the destination once complete. A
// signal, a crash or a full disk mid-write leaves the previous file (or
// none), never a truncated one that looks like a result.
//
// It is written here rather than taken from github.com/google/renameio,
// which does the same on Unix but does not build for Windows, where
// metronome also runs (os.Rename replaces the destination there too).
package wholefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// pending are the temporary files of writes under way, for RemovePending.
var pending = struct {
	sync.Mutex
	files map[string]bool
}{files: map[string]bool{}}

// Write writes data to path as os.WriteFile does, whole or not at all.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes path through write, whole or not at all: write gets a
// temporary file in path's directory, which replaces path only once write
// returned nil and the file was synced and closed. perm, less the umask,
// is the file's mode, as for os.WriteFile. A path that is not a regular
// file (/dev/stdout, a pipe) is written in place: it cannot be replaced.
// A symbolic link is followed, and the file it points to replaced.
func WriteWith(path string, perm os.FileMode, write func(io.Writer) error) error {
	target := path
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(path)
			if err != nil {
				return err
			}
			target = resolved
			st, err = os.Stat(resolved)
			if err != nil {
				return err
			}
		}
		if !st.Mode().IsRegular() {
			return inPlace(target, perm, write)
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		// Name the destination, not the temporary file's pattern.
		return &os.PathError{Op: "open", Path: path, Err: underlying(err)}
	}
	tmp := f.Name()
	track(tmp, true)
	defer track(tmp, false)
	err = write(f)
	if err == nil {
		err = f.Chmod(perm &^ umask())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing it: %w", cerr)
	}
	if err == nil {
		if rerr := os.Rename(tmp, target); rerr != nil {
			err = &os.PathError{Op: "rename", Path: path, Err: underlying(rerr)}
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// inPlace writes a destination that cannot be replaced, a device or a
// pipe, directly.
func inPlace(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing it: %w", cerr)
	}
	return err
}

// underlying is the error of a system call, without the path its wrapper
// names.
func underlying(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

func track(tmp string, on bool) {
	pending.Lock()
	defer pending.Unlock()
	if on {
		pending.files[tmp] = true
	} else {
		delete(pending.files, tmp)
	}
}

// RemovePending removes the temporary files of the writes under way: the
// process is about to exit without finishing them (a second Ctrl-C), and
// their destinations keep what they held before.
func RemovePending() {
	pending.Lock()
	defer pending.Unlock()
	for tmp := range pending.files {
		os.Remove(tmp)
		delete(pending.files, tmp)
	}
}
