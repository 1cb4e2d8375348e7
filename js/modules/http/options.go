package http

import (
	"net/http"
	"strings"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules"
)

// NewClient returns the HTTP client of one VU, made from the test's
// options (opts may be nil). It has its own connection pool, so
// connections are reused across the iterations of that VU only, it never
// follows redirects itself (the module follows them so that every hop is
// measured), and it counts the bytes its connections carry for data_sent
// and data_received.
func NewClient(opts *config.Options) *http.Client {
	return httpclient.NewClient(clientOptions(opts))
}

// newVUClient is NewClient for the VU whose state st is: its connections
// go through the run's resolver (the dns option) from the VU's local
// address (localIPs).
func newVUClient(st *modules.State) *http.Client {
	o := clientOptions(st.Options)
	o.Network, o.VU = st.Options.Network(), st.VUID
	return httpclient.NewClient(o)
}

// clientOptions are the client options the test's options make.
func clientOptions(opts *config.Options) httpclient.Options {
	o := httpclient.Options{TLS: opts.TLSConfig()}
	if opts != nil {
		o.NoConnectionReuse = opts.NoConnectionReuse != nil && *opts.NoConnectionReuse
		o.BlacklistIPs, o.BlockHostnames, o.Hosts = opts.BlacklistIPs, opts.BlockHostnames, opts.Hosts
		// A batch keeps up to batch or batchPerHost connections to a
		// host open at once; keeping fewer idle would close some of them
		// after every batch.
		if opts.Batch != nil {
			o.MaxIdlePerHost = int(*opts.Batch)
		}
		if opts.BatchPerHost != nil {
			o.MaxIdlePerHost = max(o.MaxIdlePerHost, int(*opts.BatchPerHost))
		}
	}
	return o
}

// parseDebug reads the httpDebug option.
func parseDebug(s *string) httpclient.DebugLevel {
	if s == nil {
		return httpclient.DebugOff
	}
	switch strings.ToLower(*s) {
	case "", "false", "0":
		return httpclient.DebugOff
	case "full":
		return httpclient.DebugFull
	}
	return httpclient.DebugHeaders
}
