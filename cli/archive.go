package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/wholefile"
)

func init() { addCommand(newArchiveCmd) }

// archiveMetadata is metadata.json of an archive, in k6's layout: the
// script's file URL, its directory, the consolidated options and the -e
// variables.
type archiveMetadata struct {
	Filename string            `json:"filename"`
	Pwd      string            `json:"pwd"`
	Type     string            `json:"type"`
	Options  json.RawMessage   `json:"options"`
	Env      map[string]string `json:"env"`
	Version  string            `json:"metronomeVersion"`
}

// localFiler is a script that knows the local files it read.
type localFiler interface{ LocalFiles() map[string][]byte }

// newArchiveCmd is `metronome archive`: a tar holding the script, its
// local imports, the files it open()s and the consolidated options, which
// `metronome run ARCHIVE` runs on a machine that has none of them.
func newArchiveCmd(g *globals) *cobra.Command {
	r := &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}
	out := "archive.tar"
	cmd := &cobra.Command{
		Use:   "archive [flags] script.js|script.ts",
		Short: "Bundle a script, its imports, the files it opens and its options into a tar",
		Args:  oneScript("archive needs exactly one script"),
		RunE:  func(cmd *cobra.Command, args []string) error { return r.archive(args[0], out) },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addOptionFlags(fs, r.tier)
	fs.StringVarP(&out, "archive-out", "O", out, "the archive file to write")
	fs.StringArrayVarP(&r.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable), kept in the archive")
	fs.StringVarP(&r.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	return cmd
}

func (r *runCmd) archive(scriptPath, out string) error {
	g := r.g
	t, err := r.readTiers()
	if err != nil {
		return err
	}
	scriptEnv, _, err := r.scriptEnv(true)
	if err != nil {
		return err
	}
	// An archive is not itself archived: scriptPath loads as a script.
	// The init context's console lines go where --log-output says and
	// look as run's do, as in k6.
	logs, err := g.logSink(nil)
	if err != nil {
		return err
	}
	defer logs.Close()
	lo := loadOptions{Env: scriptEnv, Stderr: g.stderr, Log: logs, Verbose: g.verbose}
	script, opts, err := r.loadConsolidated(t, scriptPath, nil, lo, loadScript)
	if err != nil {
		return logged(err, logs)
	}
	lf, ok := script.(localFiler)
	if !ok {
		return exitcode.Errorf(exitcode.Generic, "this script cannot be archived")
	}
	files := lf.LocalFiles()
	main := toSlashAbs(scriptPath)
	if files[main] == nil {
		return exitcode.Errorf(exitcode.Generic, "the script %s was not read while loading", scriptPath)
	}
	rawOpts, err := json.Marshal(opts)
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "encoding the options: %v", err)
	}
	env := map[string]string{}
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	meta := archiveMetadata{Filename: "file://" + main, Pwd: "file://" + path.Dir(main) + "/", Type: "js",
		Options: rawOpts, Env: env, Version: versionString()}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	mb, _ := json.MarshalIndent(meta, "", "  ")
	err = add("metadata.json", mb)
	if err == nil {
		err = add("data", files[main])
	}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if err == nil {
			err = add("files/file/"+strings.TrimPrefix(p, "/"), files[p])
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = wholefile.Write(out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "writing the archive %s: %v", out, err)
	}
	return nil
}

// toSlashAbs is p as an absolute slash-separated path, as the loader keys
// the files it read.
func toSlashAbs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return filepath.ToSlash(a)
	}
	return filepath.ToSlash(p)
}

// loadedArchive is an archive read back: its script path, files, options
// and -e variables.
type loadedArchive struct {
	script string
	files  map[string][]byte
	opts   *config.Options
	env    map[string]string
}

// isArchive reports whether p is a tar file (by its ustar magic).
func isArchive(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 263)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return string(head[257:262]) == "ustar"
}

// maxArchiveFiles is how many bytes of files metronome reads from an
// archive, all entries together: they are held in memory for the whole
// run, so an archive that holds more is refused before any is read.
const maxArchiveFiles = 1 << 30

// readArchive reads an archive written by `metronome archive`. Only
// metadata.json and the files under files/file/ are read; every other
// entry is skipped without reading it. An entry is read only when it is a
// regular file, no larger than the archive itself (a sparse entry, which
// a few KB of tar expand to GiBs, is refused) and within maxArchiveFiles,
// so memory grows only with bytes the archive really holds.
func readArchive(p string) (*loadedArchive, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.ScriptException, "archive %s: %v", p, err)
	}
	defer f.Close()
	fail := func(format string, args ...any) error {
		return exitcode.Errorf(exitcode.ScriptException, "archive %s: %s", p, fmt.Sprintf(format, args...))
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fail("%v", err)
	}
	a := &loadedArchive{files: map[string][]byte{}}
	var meta *archiveMetadata
	var total int64
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail("%v", err)
		}
		keep := h.Name == "metadata.json" || strings.HasPrefix(h.Name, "files/file/")
		if !keep || h.Typeflag == tar.TypeDir {
			continue
		}
		switch {
		case h.Typeflag == tar.TypeGNUSparse || hasSparseRecords(h):
			return nil, fail("%s is a sparse file, which archives do not hold", h.Name)
		case h.Typeflag != tar.TypeReg:
			continue // links and devices, which k6 skips as well
		case h.Size > st.Size():
			return nil, fail("%s claims %d bytes, more than the whole archive holds", h.Name, h.Size)
		case total+h.Size > maxArchiveFiles:
			return nil, fail("its files hold more than %d MiB (at %s, %d bytes), the most metronome reads from an archive", maxArchiveFiles>>20, h.Name, h.Size)
		}
		total += h.Size
		b := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, fail("%s: %v", h.Name, err)
		}
		if h.Name == "metadata.json" {
			meta = &archiveMetadata{}
			if err := json.Unmarshal(b, meta); err != nil {
				return nil, fail("metadata.json: %v", err)
			}
			continue
		}
		a.files["/"+strings.TrimPrefix(h.Name, "files/file/")] = b
	}
	if meta == nil || !strings.HasPrefix(meta.Filename, "file://") {
		return nil, exitcode.Errorf(exitcode.ScriptException, "archive %s has no metadata.json naming its script", p)
	}
	a.script = strings.TrimPrefix(meta.Filename, "file://")
	a.env = meta.Env
	if len(meta.Options) > 0 {
		if a.opts, err = config.Parse(meta.Options, "archive options"); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// hasSparseRecords reports whether h is a sparse file in the PAX format,
// whose records are named GNU.sparse.*.
func hasSparseRecords(h *tar.Header) bool {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// fromArchive prepares the loading of path when it is an archive: the
// script is read from the archive's files, and the archive's -e variables
// apply unless this command line sets them again. It returns the archive
// (nil for a plain script) and the script path to load.
func (r *runCmd) fromArchive(p string, lo *loadOptions) (*loadedArchive, string, error) {
	if !isArchive(p) {
		return nil, p, nil
	}
	a, err := readArchive(p)
	if err != nil {
		return nil, "", err
	}
	given := map[string]bool{}
	for _, kv := range r.env {
		k, _, _ := strings.Cut(kv, "=")
		given[k] = true
	}
	for k, v := range a.env {
		if !given[k] {
			lo.Env[k] = v
		}
	}
	lo.Files = a.files
	return a, a.script, nil
}
