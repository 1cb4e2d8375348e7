package output

import (
	"regexp"
	"strings"
)

// Mask replaces a secret in messages.
const Mask = "xxxxx"

var (
	// urlPassword matches scheme://user:password@ in free text.
	urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*):[^\s@/]*@`)
	// authHeader matches an Authorization header's value, scheme included.
	authHeader = regexp.MustCompile(`(?i)((?:proxy-)?authorization"?\s*[:=]\s*"?)(?:(?:basic|bearer|digest|token)\s+)?[^\s",;]+`)
	// bearer matches a bearer token written on its own.
	bearer = regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+`)
)

// Redact hides the secrets a message may carry: the password of every URL
// in it, Authorization header values and bearer tokens, plus every string
// of secrets (exact matches; empty ones are ignored). Outputs pass every
// message they log or return through it, so that a password in
// K6_PROMETHEUS_RW_SERVER_URL or in a mistyped -o argument never reaches a
// terminal or a CI log.
func Redact(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, Mask)
		}
	}
	msg = urlPassword.ReplaceAllString(msg, "${1}:"+Mask+"@")
	msg = authHeader.ReplaceAllString(msg, "${1}"+Mask)
	return bearer.ReplaceAllString(msg, "${1}"+Mask)
}

// RedactError returns err with its message passed through Redact; it
// still unwraps to err, so errors.Is and errors.As see through it.
func RedactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := Redact(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
