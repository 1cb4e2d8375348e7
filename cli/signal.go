package cli

// The words of the commands that read results, for signalContext.
var (
	mergeSignals = signalWords{
		first:  "stopping the wait; what was read is merged and its files written whole",
		second: "files not yet written are not written",
	}
	readSignals = signalWords{
		first:  "stopping; no file is written",
		second: "files not yet written are not written",
	}
)
