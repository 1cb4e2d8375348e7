package grpc

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/metronome-load/metronome/js/modules"
)

// debugStats writes --http-debug's lines for a client's gRPC calls, as k6
// does, reflection's included: at level info with source=http-debug only,
// "Out Header:" (method, remote address, metadata), "In Header:" and "In
// Trailer:" when they hold metadata, and with full also "Out Payload:"
// and "In Payload:" with the message as protobuf text.
type debugStats struct {
	log  *slog.Logger
	full bool
}

// debugHandler is the stats handler of a client connected under
// --http-debug, nil without it.
func debugHandler(st *modules.State) stats.Handler {
	if st.Options == nil || st.Options.HTTPDebug == nil || st.Run == nil || st.Run.Log == nil {
		return nil
	}
	switch level := strings.ToLower(*st.Options.HTTPDebug); level {
	case "", "false", "0":
		return nil
	default:
		return debugStats{log: st.Run.Log.With("source", "http-debug"), full: level == "full"}
	}
}

// TagRPC, TagConn and HandleConn complete stats.Handler: k6 writes no
// line for a connection's events.
func (debugStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (debugStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (debugStats) HandleConn(context.Context, stats.ConnStats)                       {}

// HandleRPC writes the line of one event of a call.
func (d debugStats) HandleRPC(_ context.Context, s stats.RPCStats) {
	var msg string
	switch s := s.(type) {
	case *stats.OutHeader:
		msg = fmt.Sprintf("Out Header:\nFull Method: %s\nRemote Address: %s\n%s\n", s.FullMethod, s.RemoteAddr, mdText(s.Header))
	case *stats.OutPayload:
		if d.full {
			msg = fmt.Sprintf("Out Payload:\nWire Length: %d\nSent Time: %s\n%s\n\n", s.WireLength, s.SentTime, payloadText(s.Payload))
		}
	case *stats.InHeader:
		if len(s.Header) > 0 {
			msg = fmt.Sprintf("In Header:\nWire Length: %d\n%s\n", s.WireLength, mdText(s.Header))
		}
	case *stats.InTrailer:
		if len(s.Trailer) > 0 {
			msg = fmt.Sprintf("In Trailer:\nWire Length: %d\n%s\n", s.WireLength, mdText(s.Trailer))
		}
	case *stats.InPayload:
		if d.full {
			msg = fmt.Sprintf("In Payload:\nWire Length: %d\nReceived Time: %s\n%s\n\n", s.WireLength, s.RecvTime, payloadText(s.Payload))
		}
	}
	if msg != "" {
		d.log.Info(msg)
	}
}

// mdText is metadata one "key: value, value" line each, in the map's
// order, which changes from call to call, as k6's does.
func mdText(md metadata.MD) string {
	var b strings.Builder
	for k, vs := range md {
		b.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
	}
	return b.String()
}

// payloadText is a message as multi-line protobuf text, "" for anything
// else, with one space after a field's name, as k6's build writes it.
func payloadText(p any) string {
	m, ok := p.(proto.Message)
	if !ok {
		return ""
	}
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return ""
	}
	if extraSpace() {
		return fieldName.ReplaceAllString(string(b), "$1: ")
	}
	return string(b)
}

// extraSpace reports whether this binary's protobuf text has two spaces
// after a field's name: protobuf-go adds the second in some builds, chosen
// by a hash of the binary, to keep its output from being relied on.
var extraSpace = sync.OnceValue(func() bool {
	b, _ := prototext.MarshalOptions{Multiline: true}.Marshal(wrapperspb.String("x"))
	return strings.HasPrefix(string(b), "value:  ")
})

// fieldName matches a field's name at the start of a line of multi-line
// protobuf text (an extension's or an Any's in brackets), with the two
// spaces after its colon.
var fieldName = regexp.MustCompile(`(?m)^([ \t]*(?:\w+|\[[^\]\n]+\])):  `)
