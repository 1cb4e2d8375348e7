// Package grpctest is a gRPC server for the tests of k6/net/grpc: the
// Greeter service of testdata/hello.proto, built at run time with
// protocompile and dynamicpb (no generated code), with server reflection,
// counting the calls it answered.
package grpctest

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

//go:embed testdata/hello.proto
var protos embed.FS

// Proto is the text of testdata/hello.proto, for tests that write it next
// to their script.
var Proto = func() string {
	b, err := fs.ReadFile(protos, "testdata/hello.proto")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// Server is a running Greeter.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// Calls counts the answered calls by method name ("SayHello").
	calls map[string]*atomic.Int64
	// Received counts the messages clients streamed in.
	Received atomic.Int64
	// ReflectToken is the last x-reflect-token metadata a reflection
	// request carried; reflection is refused when it is there and not
	// "secret".
	ReflectToken atomic.Pointer[string]
	// Holding counts the Chat streams whose end the server held back:
	// those that sent a message named "hold".
	Holding atomic.Int64
	// stall, set with SetStall, is how long Stall waits for a call
	// arriving now.
	stall atomic.Pointer[func(now time.Time) time.Duration]

	srv     *grpc.Server
	in, out protoreflect.MessageDescriptor
	files   *protoregistry.Files
}

// Calls returns how many calls of method the server answered.
func (s *Server) Calls(method string) int64 { return s.calls[method].Load() }

// SetStall sets how long the Stall method waits for a call arriving at a
// given time. The calls come from another process, which the race
// detector cannot see, so the setting is atomic.
func (s *Server) SetStall(f func(now time.Time) time.Duration) { s.stall.Store(&f) }

// Start compiles the service, serves it on 127.0.0.1 with reflection and
// stops it when the test ends.
func Start(cleanup func(func())) (*Server, error) {
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(path string) (io.ReadCloser, error) { return protos.Open("testdata/" + path) },
	})}
	res, err := comp.Compile(context.Background(), "hello.proto")
	if err != nil {
		return nil, err
	}
	fd := res[0]
	files := new(protoregistry.Files)
	if err := files.RegisterFile(fd); err != nil {
		return nil, err
	}
	for i := 0; i < fd.Imports().Len(); i++ {
		imp := fd.Imports().Get(i).FileDescriptor
		if err := files.RegisterFile(imp); err != nil {
			return nil, err
		}
	}
	// The reflection service describes itself too, as k6 asks for it.
	if err := files.RegisterFile(rpb.File_grpc_reflection_v1_reflection_proto); err != nil {
		return nil, err
	}
	sd := fd.Services().ByName("Greeter")
	s := &Server{calls: map[string]*atomic.Int64{}, files: files,
		in: fd.Messages().ByName("HelloRequest"), out: fd.Messages().ByName("HelloReply")}
	desc := grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil), Metadata: "hello.proto"}
	for _, m := range []string{"SayHello", "Stall", "Fail"} {
		s.calls[m] = new(atomic.Int64)
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: m, Handler: s.unary(m)})
	}
	for _, m := range []string{"Chat", "Count", "Repeat"} {
		s.calls[m] = new(atomic.Int64)
		md := sd.Methods().ByName(protoreflect.Name(m))
		desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: m, Handler: s.stream(m),
			ClientStreams: md.IsStreamingClient(), ServerStreams: md.IsStreamingServer()})
	}
	s.srv = grpc.NewServer(grpc.StreamInterceptor(s.checkReflection))
	s.srv.RegisterService(&desc, struct{}{})
	rpb.RegisterServerReflectionServer(s.srv, reflection.NewServerV1(reflection.ServerOptions{
		Services: s.srv, DescriptorResolver: files, ExtensionResolver: protoregistry.GlobalTypes,
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.Addr = ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	cleanup(s.srv.Stop)
	return s, nil
}

func (s *Server) reply(msg string, count int32) *dynamicpb.Message {
	r := dynamicpb.NewMessage(s.out)
	r.Set(s.out.Fields().ByName("message"), protoreflect.ValueOfString(msg))
	r.Set(s.out.Fields().ByName("count"), protoreflect.ValueOfInt32(count))
	return r
}

func (s *Server) fields(m *dynamicpb.Message) (string, int32) {
	return m.Get(s.in.Fields().ByName("name")).String(), int32(m.Get(s.in.Fields().ByName("count")).Int())
}

// unary answers the unary methods.
func (s *Server) unary(method string) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		req := dynamicpb.NewMessage(s.in)
		if err := dec(req); err != nil {
			return nil, err
		}
		name, count := s.fields(req)
		defer s.calls[method].Add(1)
		switch method {
		case "SayHello":
			md, _ := metadata.FromIncomingContext(ctx)
			if v := md.Get("x-name"); len(v) > 0 {
				_ = grpc.SetHeader(ctx, metadata.Pairs("x-echo", v[0]))
			}
			_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "done"))
			return s.reply("hello "+name, count+1), nil
		case "Stall":
			if f := s.stall.Load(); f != nil {
				if d := (*f)(time.Now()); d > 0 {
					select {
					case <-time.After(d):
					case <-ctx.Done():
						return nil, status.FromContextError(ctx.Err()).Err()
					}
				}
			}
			return s.reply("done "+name, count), nil
		default:
			return nil, status.Error(codes.NotFound, "no "+name)
		}
	}
}

// checkReflection refuses a reflection request whose x-reflect-token
// metadata is not "secret" and records the token.
func (s *Server) checkReflection(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo" {
		md, _ := metadata.FromIncomingContext(ss.Context())
		if v := md.Get("x-reflect-token"); len(v) > 0 {
			s.ReflectToken.Store(&v[0])
			if v[0] != "secret" {
				return status.Error(codes.PermissionDenied, "wrong x-reflect-token")
			}
		}
	}
	return handler(srv, ss)
}

// HoldBound is how long Chat holds back the end of a stream that sent
// "hold" when the client does not give it up first.
const HoldBound = 30 * time.Second

// stream answers the streaming methods.
func (s *Server) stream(method string) grpc.StreamHandler {
	return func(_ any, st grpc.ServerStream) error {
		defer s.calls[method].Add(1)
		switch method {
		case "Repeat":
			req := dynamicpb.NewMessage(s.in)
			if err := st.RecvMsg(req); err != nil {
				return err
			}
			name, count := s.fields(req)
			for i := int32(0); i < count; i++ {
				if err := st.SendMsg(s.reply(fmt.Sprintf("%s %d", name, i), i)); err != nil {
					return err
				}
			}
			return nil
		}
		var n int32
		held := false
		for {
			req := dynamicpb.NewMessage(s.in)
			err := st.RecvMsg(req)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			n++
			s.Received.Add(1)
			if method == "Chat" {
				name, _ := s.fields(req)
				held = held || name == "hold"
				if name == "fail" {
					return status.Error(codes.NotFound, "no fail")
				}
				if err := st.SendMsg(s.reply("hello "+name, n)); err != nil {
					return err
				}
			}
		}
		if method == "Count" {
			return st.SendMsg(s.reply("counted", n))
		}
		if held {
			// The end is held back until the client gives the stream up
			// (or HoldBound passes, so that no test waits forever).
			s.Holding.Add(1)
			select {
			case <-st.Context().Done():
				return status.FromContextError(st.Context().Err()).Err()
			case <-time.After(HoldBound):
			}
		}
		return nil
	}
}

// ServeHTTP answers gRPC calls arriving over HTTP/2 on another server's
// listener, so a suite can serve gRPC next to plain HTTP on one address.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.srv.ServeHTTP(w, r) }
