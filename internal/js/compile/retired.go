package compile

// retiredModules are the k6/experimental paths k6 v2.2.0 refuses because
// their module graduated or was removed, each with what k6 tells the user
// to do instead; metronome refuses them with the same sentence (exit 107,
// as k6), so that a script written for an older k6 learns what to change
// rather than that the module is unknown. The sentences are k6's own, as
// a user sees them (test/compat's 219–224-retired-experimental-*
// records them), odd spacing and wording included, so that what a user or
// a CI job searches for in k6's output is found in metronome's.
var retiredModules = map[string]string{
	"k6/experimental/redis": "k6/experimental/redis has been removed. Please migrate to the new version by changing your import to 'k6/x/redis'." +
		" Read more here: https://grafana.com/docs/k6/latest/javascript-api/k6-x-redis",
	"k6/experimental/browser": "k6/experimental/browser has been graduated, please use k6/browser instead." +
		"Please update your imports to use k6/browser instead of k6/experimental/browser, For more information, see the migration guide at the link:" +
		" https://grafana.com/docs/k6/latest/using-k6-browser/migrating-to-k6-v0-52/",
	"k6/experimental/grpc": "k6/experimental/grpc has been graduated, please use k6/net/grpc instead." +
		" See https://grafana.com/docs/k6/latest/javascript-api/k6-net-grpc/ for more information.",
	"k6/experimental/timers": "k6/experimental/timers has been graduated, and it's now globally available as defined by standard WebAPIs." +
		" You just need to remove the import.",
	"k6/experimental/tracing": "k6/experimental/tracing has been removed. All of it functionality is available as pure JavaScript module." +
		" More info available at the docs: https://grafana.com/docs/k6/latest/javascript-api/jslib/http-instrumentation-tempo",
	"k6/experimental/webcrypto": "k6/experimental/webcrypto has been graduated and it's now globally available as defined by standard WebAPIs." +
		" You just need to remove the import.",
}

// RetiredError is the import of a module of retiredModules: k6 throws its
// sentence when the init context requires the module, so it is logged as
// an exception, not as a script that does not load.
type RetiredError struct{ Msg string }

func (e *RetiredError) Error() string { return e.Msg }
