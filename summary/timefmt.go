package summary

// FormatTime prints a time in milliseconds exactly as the text summary
// does (unit "" picks one, or "s", "ms", "us"), so that other views of the
// same numbers, such as the web dashboard's report, read the same.
func FormatTime(ms float64, unit string) string { return formatTime(ms, unit) }
