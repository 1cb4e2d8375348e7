// Package fs implements the "k6/experimental/fs" module: open(path) in the
// init context gives a promise of a File, which reads a file's bytes into
// a Uint8Array, seeks and stats. A file's content is read from disk once
// per process and shared read-only by every VU; each File has its own
// offset.
package fs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/experimental/fs", modules.ModuleFunc(New))
}

// Whence values of File.seek, exported as SeekMode.
const (
	SeekStart   = 0
	SeekCurrent = 1
	SeekEnd     = 2
)

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	rt := vu.Runtime()
	seek := rt.NewObject()
	_ = seek.Set("Start", SeekStart)
	_ = seek.Set("Current", SeekCurrent)
	_ = seek.Set("End", SeekEnd)
	return modules.Exports{Named: map[string]any{
		"open":     m.open,
		"SeekMode": seek,
	}}, nil
}

type module struct{ vu modules.VU }

// Content is a file's bytes as read once for the whole process. It never
// changes, so VUs read it without locking.
type Content struct {
	Path string
	Data []byte
}

// File is the JavaScript File: shared content and this File's offset.
// Other modules (k6/experimental/csv) take its content.
type File struct {
	rt      *sobek.Runtime
	Content *Content
	offset  int64
	// Path is the file's absolute path.
	Path string `js:"path"`
}

// FileOf returns the File a JavaScript value holds.
func FileOf(v sobek.Value) (*File, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	f, ok := o.Export().(*File)
	return f, ok
}

// open is open(path): in the init context only, a promise of the File at
// path (relative paths are from the script's folder; a file:// URL names a
// local path, as in k6).
func (m *module) open(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	env := m.vu.InitEnv()
	if env == nil {
		return jsmod.Settled(rt, nil, jsmod.Errorf("ForbiddenError", "open() failed; reason: opening a file is allowed only in the Init context"))
	}
	name := c.Argument(0).String()
	if sobek.IsUndefined(c.Argument(0)) || name == "" {
		return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "open() failed; reason: the path must be a non-empty string"))
	}
	path := modules.LocalPath(name)
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.CWD, path)
	}
	path = filepath.Clean(path)
	val, err := env.Shared.Get("k6/experimental/fs:"+path, func() (any, error) {
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, errIsDir
		}
		b, err := modules.ReadLocalFile(path)
		if err != nil {
			return nil, err
		}
		return &Content{Path: path, Data: b}, nil
	})
	switch {
	case errors.Is(err, syscall.EIO):
		// k6 rejects with the bare error: "input/output error", no name.
		return jsmod.Settled(rt, nil, &jsmod.Bare{Err: syscall.EIO})
	case errors.Is(err, fs.ErrNotExist):
		return jsmod.Settled(rt, nil, jsmod.Errorf("NotFoundError", "no such file or directory %q", path))
	case errors.Is(err, errIsDir):
		return jsmod.Settled(rt, nil, jsmod.Errorf("InvalidResourceError", "cannot open %q: opening a directory is not supported", path))
	case err != nil:
		return jsmod.Settled(rt, nil, jsmod.Errorf("Error", "open(%q) failed: %v", name, err))
	}
	content, ok := val.(*Content)
	if !ok {
		return jsmod.Settled(rt, nil, jsmod.Errorf("Error", "open(%q): the name is taken by other shared data", name))
	}
	return jsmod.Settled(rt, &File{rt: rt, Content: content, Path: path}, nil)
}

var errIsDir = errors.New("is a directory")

// Read is read(buffer): copies the next bytes into the Uint8Array buffer
// and resolves to how many, or to null at the end of the file.
func (f *File) Read(c sobek.FunctionCall) sobek.Value {
	rt := f.rt
	buf, ok := uint8Array(c.Argument(0))
	if !ok {
		return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "read() failed; reason: into argument must be a Uint8Array"))
	}
	data := f.Content.Data
	if f.offset >= int64(len(data)) {
		return jsmod.Settled(rt, sobek.Null(), nil)
	}
	n := copy(buf, data[f.offset:])
	f.offset += int64(n)
	return jsmod.Settled(rt, n, nil)
}

// uint8Array returns the bytes a Uint8Array views (sobek exports a
// typed array as a slice of its buffer, so writes land in the buffer).
func uint8Array(v sobek.Value) ([]byte, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	b, ok := o.Export().([]uint8)
	return b, ok
}

// Seek is seek(offset, whence): moves the offset and resolves to the new
// one. As k6 v2.2.0 does, SeekMode.End counts from the last byte, not
// from the end: seek(0, End) lands on the last byte.
func (f *File) Seek(c sobek.FunctionCall) sobek.Value {
	rt := f.rt
	off := c.Argument(0).ToInteger()
	whence := c.Argument(1)
	size := int64(len(f.Content.Data))
	var to int64
	switch w := whence.ToInteger(); {
	case sobek.IsUndefined(whence) || w == SeekStart:
		if off < 0 {
			return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "offset cannot be negative when using SeekModeStart"))
		}
		to = off
	case w == SeekCurrent:
		to = f.offset + off
	case w == SeekEnd:
		if off > 0 {
			return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "offset cannot be positive when using SeekModeEnd"))
		}
		to = size - 1 + off
	default:
		return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "seek() failed; reason: the whence argument must be a SeekMode"))
	}
	if to < 0 {
		return jsmod.Settled(rt, nil, jsmod.Errorf("TypeError", "seek() failed; reason: the resulting offset %d is negative", to))
	}
	f.offset = to
	return jsmod.Settled(rt, to, nil)
}

// Stat is stat(): a promise of {name, size}; name is the file's base
// name, as k6 v2.2.0 gives it (text.txt for open('./data/text.txt')).
func (f *File) Stat() sobek.Value {
	o := f.rt.NewObject()
	_ = o.Set("name", filepath.Base(f.Content.Path))
	_ = o.Set("size", len(f.Content.Data))
	return jsmod.Settled(f.rt, o, nil)
}
