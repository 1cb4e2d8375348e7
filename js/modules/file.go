package modules

import (
	"io"
	"os"
	"strings"
	"syscall"
)

// LocalPath is the path a script names a local file by, for open() and
// k6/experimental/fs's open: as in k6, a "file://" prefix is cut off and
// what follows is the path as written (absolute, or relative to the
// script; no host part and no percent-decoding).
func LocalPath(name string) string { return strings.TrimPrefix(name, "file://") }

// ReadLocalFile reads the whole file at path as k6 gives a local file to
// a script. k6 reads every file through a cache that refuses a copy whose
// length differs from the size the file system reports, so a file that
// does not hold its reported size is syscall.EIO ("input/output error"):
// /proc and /sys files, /proc/self/environ among them (which would hand
// the script the load generator's environment, outputs' tokens included),
// and a file that grows while it is read.
func ReadLocalFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, max(st.Size(), 0)+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	if int64(len(b)) != st.Size() {
		return nil, syscall.EIO
	}
	return b, nil
}
