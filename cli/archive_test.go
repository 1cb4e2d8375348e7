package cli

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
)

// writeTar writes an archive of metadata.json, a script and big.bin whose
// header says size bytes; only the first len(data) of them are written
// and the rest is a hole in the file (no disk space, and read back as
// zeros), so that huge entries cost nothing.
func writeTar(t *testing.T, size int64, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	add := func(name string, b string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	add("metadata.json", `{"filename":"file:///x/script.js","options":{}}`)
	add("files/file/x/script.js", "export default function () {}\n")
	if err := tw.WriteHeader(&tar.Header{Name: "files/file/x/big.bin", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil && !strings.Contains(err.Error(), "missed writing") {
		t.Fatal(err)
	}
	// Skip the unwritten rest of the entry: the file gets a hole, and the
	// entry's padding and the end-of-archive blocks follow it.
	end := (size + 511) / 512 * 512
	if _, err := f.Seek(end-int64(len(data)), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	return p
}

// Archive entries whose size the archive does not hold in bytes are
// refused before anything is allocated for them, with one sentence that
// names the entry: a sparse file (10 KB of tar for 2 GiB, in GNU and PAX
// form; k6 v2.2.0 skips such an entry and the script's open() fails), a
// header claiming more than the archive holds, and files beyond
// maxArchiveFiles (here in an archive that is itself a sparse file on
// disk). Before, the 2 GiB entry took 4.2 GB and 60 s and the script saw
// 1 GiB of it.
func TestArchiveRefusesWhatItDoesNotHold(t *testing.T) {
	claims := writeTar(t, 1<<30, "")
	// A truncated copy: the header still claims 1 GiB.
	short := filepath.Join(t.TempDir(), "short.tar")
	b, err := os.ReadFile(claims)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, b[:4096], 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"testdata/archive/gnu-sparse.tar": "archive testdata/archive/gnu-sparse.tar: files/file/x/big.bin is a sparse file, which archives do not hold",
		"testdata/archive/pax-sparse.tar": "archive testdata/archive/pax-sparse.tar: files/file/x/big.bin is a sparse file, which archives do not hold",
		short:                             "archive " + short + ": files/file/x/big.bin claims 1073741824 bytes, more than the whole archive holds",
		writeTar(t, maxArchiveFiles, ""):  "its files hold more than 1024 MiB (at files/file/x/big.bin, 1073741824 bytes), the most metronome reads from an archive",
	} {
		_, err := readArchive(path)
		if err == nil || !strings.Contains(err.Error(), want) || exitcode.Of(err) != exitcode.ScriptException {
			t.Errorf("%s: %v (exit %d), want %q and exit %d", path, err, exitcode.Of(err), want, exitcode.ScriptException)
		}
	}
	a, err := readArchive(writeTar(t, 5, "12345"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(a.files["/x/big.bin"]); got != "12345" || a.script != "/x/script.js" {
		t.Errorf("a sound archive: big.bin %q, script %q", got, a.script)
	}
}
