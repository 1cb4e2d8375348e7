//go:build !unix

package wholefile

import "os"

// umask is none where the platform has none.
func umask() os.FileMode { return 0 }
