package grpc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// defaultTimeout bounds connect and each call when no timeout is given,
// as k6's default of 60 s does.
const defaultTimeout = 60 * time.Second

// client is one grpc.Client object: the methods it knows and its
// connection.
type client struct {
	m *module
	// methods maps "pkg.Service/Method" to its descriptor.
	methods map[string]protoreflect.MethodDescriptor
	// types resolves message types (google.protobuf.Any in JSON).
	types *protoregistry.Types
	conn  *grpc.ClientConn
	addr  string
	// bytes counts the connection's traffic for data_sent/received.
	bytes byteCounter
}

// newClient is `new grpc.Client()`.
func (m *module) newClient(call sobek.ConstructorCall) *sobek.Object {
	c := &client{m: m, methods: map[string]protoreflect.MethodDescriptor{}, types: new(protoregistry.Types)}
	o := call.This
	m.clients[o] = c
	set := func(name string, f func(sobek.FunctionCall) sobek.Value) { _ = o.Set(name, f) }
	set("load", c.jsLoad)
	set("loadProtoset", c.jsLoadProtoset)
	set("connect", c.jsConnect)
	set("invoke", c.jsInvoke)
	set("healthCheck", c.jsHealthCheck)
	set("asyncInvoke", c.jsAsyncInvoke)
	set("close", c.jsClose)
	return nil
}

// jsLoad is client.load(importPaths, ...protoFiles): it compiles the files
// and returns the descriptors of their services' methods.
func (c *client) jsLoad(call sobek.FunctionCall) sobek.Value {
	rt := c.m.rt
	env := c.m.vu.InitEnv()
	if env == nil {
		jsmod.Throwf(rt, "client.load must be called in the init context (outside the default function)")
	}
	var imports []string
	if v := call.Argument(0); !jsmod.Absent(v) {
		if err := rt.ExportTo(v, &imports); err != nil {
			jsmod.ThrowTypeError(rt, "client.load's first argument must be an array of import paths, not %s", jsmod.Describe(v))
		}
	}
	var files []string
	for i, a := range call.Arguments[min(1, len(call.Arguments)):] {
		files = append(files, jsmod.String(rt, a, fmt.Sprintf("client.load's proto file %d", i+1)))
	}
	if len(files) == 0 {
		jsmod.ThrowTypeError(rt, "client.load needs at least one .proto file after the import paths")
	}
	// Import paths are relative to the script; a file found nowhere on
	// them is looked up from the script's folder, as k6 does.
	paths := make([]string, 0, len(imports)+1)
	for _, p := range imports {
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.CWD, p)
		}
		paths = append(paths, p)
	}
	paths = append(paths, env.CWD)
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
	}
	res, err := comp.Compile(context.Background(), files...)
	if err != nil {
		jsmod.Throwf(rt, "client.load: %v", err)
	}
	fds := make([]protoreflect.FileDescriptor, 0, len(res))
	for _, f := range res {
		fds = append(fds, f)
	}
	return c.addFiles(fds)
}

// jsLoadProtoset is client.loadProtoset(file): a FileDescriptorSet as
// `protoc --descriptor_set_out --include_imports` writes it.
func (c *client) jsLoadProtoset(call sobek.FunctionCall) sobek.Value {
	rt := c.m.rt
	env := c.m.vu.InitEnv()
	if env == nil {
		jsmod.Throwf(rt, "client.loadProtoset must be called in the init context (outside the default function)")
	}
	name := jsmod.String(rt, call.Argument(0), "client.loadProtoset's file")
	if !filepath.IsAbs(name) {
		name = filepath.Join(env.CWD, name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		jsmod.Throwf(rt, "client.loadProtoset: %v", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		jsmod.Throwf(rt, "client.loadProtoset: %s is not a protoset: %v", name, err)
	}
	fds, err := filesOf(set.File)
	if err != nil {
		jsmod.Throwf(rt, "client.loadProtoset: %v", err)
	}
	return c.addFiles(fds)
}

// filesOf links file descriptor protos into descriptors, in any order.
func filesOf(protos []*descriptorpb.FileDescriptorProto) ([]protoreflect.FileDescriptor, error) {
	reg, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: protos})
	if err != nil {
		return nil, err
	}
	out := make([]protoreflect.FileDescriptor, 0, len(protos))
	for _, p := range protos {
		fd, err := reg.FindFileByPath(p.GetName())
		if err != nil {
			return nil, err
		}
		out = append(out, fd)
	}
	return out, nil
}

// addFiles records the methods and message types of fds and returns the
// method descriptors as k6 does: [{package, service, full_method, name,
// is_client_stream, is_server_stream}].
func (c *client) addFiles(fds []protoreflect.FileDescriptor) sobek.Value {
	var out []map[string]any
	for _, fd := range fds {
		c.addTypes(fd.Messages())
		svcs := fd.Services()
		for i := 0; i < svcs.Len(); i++ {
			sd := svcs.Get(i)
			ms := sd.Methods()
			for j := 0; j < ms.Len(); j++ {
				md := ms.Get(j)
				c.methods[string(sd.FullName())+"/"+string(md.Name())] = md
				out = append(out, map[string]any{
					"package": string(fd.Package()), "service": string(sd.Name()),
					"full_method": "/" + string(sd.FullName()) + "/" + string(md.Name()), "name": string(md.Name()),
					"is_client_stream": md.IsStreamingClient(), "is_server_stream": md.IsStreamingServer(),
				})
			}
		}
	}
	return c.m.rt.ToValue(out)
}

// addTypes registers message types, nested ones included, for Any.
func (c *client) addTypes(msgs protoreflect.MessageDescriptors) {
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		if _, err := c.types.FindMessageByName(md.FullName()); err != nil {
			_ = c.types.RegisterMessage(dynamicType(md))
		}
		c.addTypes(md.Messages())
	}
}

// connectParams are connect's options.
type connectParams struct {
	plaintext        bool
	reflect          bool
	timeout          time.Duration
	maxRecv, maxSend int
	// tls is connect's tls param, nil when absent or empty.
	tls *tlsParam
	// reflectMeta is reflectMetadata: sent with the reflection request.
	reflectMeta metadata.MD
}

// jsConnect is client.connect(address, params).
func (c *client) jsConnect(call sobek.FunctionCall) sobek.Value {
	rt := c.m.rt
	st := c.m.state("client.connect")
	addr := jsmod.String(rt, call.Argument(0), "client.connect's address")
	c.bytes.dialer = st.Run.Dialer(st.VUID)
	p := c.connectParams(call.Argument(1))
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
	// k6's dial: blocking, failing at once on a dial error retrying
	// cannot cure (a closed port) and otherwise at the timeout, with the
	// last connection error (a failed TLS handshake, say) in the message.
	opts := []grpc.DialOption{
		grpc.WithContextDialer(c.bytes.dial),
		grpc.WithBlock(),                  //nolint:staticcheck // k6's semantics, see above
		grpc.FailOnNonTempDialError(true), //nolint:staticcheck // k6's semantics, see above
		grpc.WithReturnConnectionError(),  //nolint:staticcheck // k6's semantics, see above
	}
	if h := debugHandler(st); h != nil {
		opts = append(opts, grpc.WithStatsHandler(h))
	}
	if p.plaintext {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		cfg, err := p.tls.config(st.Options.TLSConfig())
		if err != nil {
			jsmod.Throwf(rt, "client.connect %s: %v", addr, err)
		}
		cfg.NextProtos = []string{"h2"}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	var callOpts []grpc.CallOption
	if p.maxRecv > 0 {
		callOpts = append(callOpts, grpc.MaxCallRecvMsgSize(p.maxRecv))
	}
	if p.maxSend > 0 {
		callOpts = append(callOpts, grpc.MaxCallSendMsgSize(p.maxSend))
	}
	if len(callOpts) > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(callOpts...))
	}
	ctx, cancel := context.WithTimeout(c.m.vu.Context(), p.timeout)
	defer cancel()
	conn, err := grpc.DialContext(ctx, addr, opts...) //nolint:staticcheck // k6's semantics, see above
	if err != nil {
		// grpc-go's own words, thrown as a GoError, as k6 throws them.
		jsmod.Throw(rt, jsmod.Errorf(jsmod.GoError, "%v", err))
	}
	c.conn, c.addr = conn, addr
	if p.reflect {
		fds, err := reflectFiles(metadata.NewOutgoingContext(ctx, p.reflectMeta), conn, func(start time.Time, err error) {
			c.reflectionFailed(st, start, err)
		})
		if err != nil {
			// k6's words, thrown as a GoError, as k6 throws them.
			jsmod.Throw(rt, jsmod.Errorf(jsmod.GoError, "%v", err))
		}
		c.addFiles(fds)
	}
	c.countBytes(c.m.vu.State())
	return rt.ToValue(true)
}

// reflectionFailed records the grpc_req_duration of a failed reflection
// stream as k6 does: with the VU's tags and the stream's status. (k6
// records none for a reflection that succeeds: its stream is still open
// when connect returns and ends on a context already done.)
func (c *client) reflectionFailed(st *modules.State, start time.Time, err error) {
	m := c.m.metric(st, &c.m.m.reqDuration, ReqDurationName, metrics.Trend, metrics.Time)
	if m == nil || st.Recorder == nil {
		return
	}
	tags := st.Tags
	if tags == nil {
		tags = metrics.EmptyTags
	}
	now := time.Now()
	st.Recorder.Record(metrics.Sample{Metric: m, Tags: withStatus(st, tags, status.Code(err)), Time: now,
		Value: metrics.Milliseconds(now.Sub(start))})
}

// connectParams reads connect's second argument.
func (c *client) connectParams(v sobek.Value) connectParams {
	rt := c.m.rt
	p := connectParams{timeout: defaultTimeout}
	if jsmod.Absent(v) {
		return p
	}
	o := jsmod.Object(rt, v, "client.connect's params")
	for _, k := range o.Keys() {
		x := o.Get(k)
		switch k {
		case "plaintext":
			p.plaintext = x.ToBoolean()
		case "reflect":
			p.reflect = x.ToBoolean()
		case "timeout":
			p.timeout = c.duration(x, "client.connect's timeout")
		case "maxReceiveSize":
			p.maxRecv = int(jsmod.Int(rt, x, "client.connect's maxReceiveSize", 0, 1<<31-1))
		case "maxSendSize":
			p.maxSend = int(jsmod.Int(rt, x, "client.connect's maxSendSize", 0, 1<<31-1))
		case "tls":
			p.tls = c.tlsParam(x)
		case "reflectMetadata":
			p.reflectMeta = c.metadata(x, "client.connect's reflectMetadata")
		default:
			jsmod.Throwf(rt, "client.connect: unknown param %q (known: plaintext, reflect, reflectMetadata, timeout, maxReceiveSize, maxSendSize, tls)", k)
		}
	}
	return p
}

// duration reads a timeout: a number of milliseconds or a string such as
// "10s" (k6's forms).
func (c *client) duration(v sobek.Value, what string) time.Duration {
	if sobek.IsNumber(v) {
		ms := v.ToFloat()
		if ms < 0 {
			jsmod.ThrowTypeError(c.m.rt, "%s must not be negative", what)
		}
		return time.Duration(ms * float64(time.Millisecond))
	}
	s := jsmod.String(c.m.rt, v, what)
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		jsmod.ThrowTypeError(c.m.rt, "%s must be a duration such as \"10s\", not %q", what, s)
	}
	return d
}

// jsClose is client.close().
func (c *client) jsClose(sobek.FunctionCall) sobek.Value {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
		c.countBytes(c.m.vu.State())
	}
	return sobek.Undefined()
}

// method looks a method name up: "pkg.Service/Method", with or without a
// leading slash.
func (c *client) method(v sobek.Value) (string, protoreflect.MethodDescriptor) {
	rt := c.m.rt
	name := jsmod.String(rt, v, "the method")
	key := strings.TrimPrefix(name, "/")
	md, ok := c.methods[key]
	if !ok {
		jsmod.Throwf(rt, "method %q not found in file descriptors (load its .proto in the init context or connect with reflect: true)", "/"+key)
	}
	return "/" + key, md
}

// requestJSON turns the request object into JSON for protojson.
func (c *client) requestJSON(v sobek.Value) []byte {
	if jsmod.Absent(v) {
		return []byte("{}")
	}
	if sobek.IsString(v) {
		return []byte(v.String())
	}
	b, err := json.Marshal(v.Export())
	if err != nil {
		jsmod.Throwf(c.m.rt, "the request is not JSON-serialisable: %v", err)
	}
	return b
}

// unmarshalOpts and marshalOpts are protojson's settings for requests and
// responses; responses show fields that have their default value, as
// k6's do.
func (c *client) unmarshalOpts() protojson.UnmarshalOptions {
	return protojson.UnmarshalOptions{Resolver: c.types}
}

func (c *client) marshalOpts() protojson.MarshalOptions {
	return protojson.MarshalOptions{Resolver: c.types, EmitUnpopulated: true}
}

// countBytes adds the traffic since the last call to the VU's data_sent
// and data_received of the current iteration.
func (c *client) countBytes(st *modules.State) {
	if st == nil {
		return
	}
	st.DataSent += c.bytes.sent.Swap(0)
	st.DataReceived += c.bytes.received.Swap(0)
}
