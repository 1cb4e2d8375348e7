// Package logger makes the logrus loggers k6's API hands out write to
// metronome's log.
package logger

import (
	"context"
	"io"
	"log/slog"
	"sort"

	"github.com/sirupsen/logrus"
)

// New returns a logrus logger whose entries go to log, the run's
// log: the entry's fields become the line's attributes.
func New(log *slog.Logger) *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetFormatter(silent{})
	if log == nil {
		return l
	}
	l.AddHook(toSlog{log})
	l.SetLevel(logrus.InfoLevel)
	if log.Enabled(context.Background(), slog.LevelDebug) {
		l.SetLevel(logrus.DebugLevel)
	}
	return l
}

// silent formats nothing: entries reach the log through toSlog.
type silent struct{}

func (silent) Format(*logrus.Entry) ([]byte, error) { return nil, nil }

// toSlog hands logrus entries to a slog logger.
type toSlog struct{ log *slog.Logger }

func (toSlog) Levels() []logrus.Level { return logrus.AllLevels }

func (h toSlog) Fire(e *logrus.Entry) error {
	level := slog.LevelError
	switch e.Level {
	case logrus.TraceLevel, logrus.DebugLevel:
		level = slog.LevelDebug
	case logrus.InfoLevel:
		level = slog.LevelInfo
	case logrus.WarnLevel:
		level = slog.LevelWarn
	}
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]slog.Attr, len(keys))
	for i, k := range keys {
		attrs[i] = slog.Any(k, e.Data[k])
	}
	h.log.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}
