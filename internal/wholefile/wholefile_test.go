package wholefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new and longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new and longer" {
		t.Fatalf("read %q, %v", b, err)
	}
	st, _ := os.Stat(path)
	if want := 0o644 &^ umask(); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v (0644 less the umask), as os.WriteFile gives", st.Mode().Perm(), want)
	}
	if left := entries(t, dir); len(left) != 1 {
		t.Errorf("the directory holds %v, want only the file", left)
	}
}

// While the bytes are being written the destination keeps what it held,
// and a write that fails leaves it so, with no temporary file behind.
func TestWriteInterruptedLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("previous report"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := WriteWith(path, 0o644, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of a new rep")); err != nil {
			return err
		}
		if b, _ := os.ReadFile(path); string(b) != "previous report" {
			t.Errorf("mid-write the destination holds %q", b)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the writer's", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "previous report" {
		t.Errorf("after a failed write the destination holds %q", b)
	}
	if left := entries(t, dir); len(left) != 1 {
		t.Errorf("the directory holds %v, want only the old file", left)
	}
}

// RemovePending (a second Ctrl-C) removes the temporary file of a write
// under way, and the destination never appears.
func TestRemovePending(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	_ = WriteWith(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("{"))
		if n := len(entries(t, dir)); n != 1 {
			t.Errorf("mid-write the directory holds %d entries, want the temporary file", n)
		}
		RemovePending()
		if n := len(entries(t, dir)); n != 0 {
			t.Errorf("after RemovePending the directory holds %d entries", n)
		}
		return errors.New("the process exits")
	})
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the destination exists: %v", err)
	}
}

// A symbolic link is followed: the file it points to is replaced and the
// link stays a link.
func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q", b)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), "..") {
			names = append(names, e.Name())
		}
	}
	return names
}

// An error names the destination, as os.WriteFile's does, not the
// temporary file.
func TestWriteErrorNamesTheDestination(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "summary.json")
	err := Write(path, []byte("x"), 0o644)
	if err == nil || err.Error() != "open "+path+": no such file or directory" {
		t.Errorf("err %v", err)
	}
}
