package common

import (
	"net/url"
	"path"
	"path/filepath"

	"go.k6.io/k6/v2/lib"
)

// InitEnvironment is what Go code sees of the init context: the test's
// registry, logger and environment lookup, and the folder of the script
// being initialised.
type InitEnvironment struct {
	*lib.TestPreInitState
	// CWD is the folder of the script being initialised, as a file URL.
	CWD *url.URL
}

// GetAbsFilePath returns filename as an absolute, clean, slash-rooted
// path, relative names taken from CWD.
func (ie *InitEnvironment) GetAbsFilePath(filename string) string {
	if filename == "" {
		filename = "."
	}
	if filename[0] != '/' && filename[0] != '\\' && !filepath.IsAbs(filename) && ie.CWD != nil {
		filename = path.Join(ie.CWD.Path, filepath.ToSlash(filename))
	}
	filename = path.Clean(filepath.ToSlash(filename))
	if filename[0] != '/' {
		filename = "/" + filename
	}
	return filename
}
