package grpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// dynamicType is the message type of md built at run time.
func dynamicType(md protoreflect.MessageDescriptor) protoreflect.MessageType {
	return dynamicpb.NewMessageType(md)
}

// reflectAttempts is how many streams a reflection request is tried on
// before its error is the connect's, as k6's reflection client tries.
const reflectAttempts = 3

// reflectFiles asks the server's reflection service (grpc.reflection.v1)
// for every service it offers ("*", as k6 asks) and the files that define
// them, with their imports: the reflection service's own too, and a file
// once however many of its services are listed, as k6 asks for them (its
// --http-debug lines show the requests). A request whose stream fails is
// sent again on a new stream, up to reflectAttempts in all; failed
// reports each failed stream, which k6 records in grpc_req_duration.
func reflectFiles(ctx context.Context, conn *grpc.ClientConn, failed func(start time.Time, err error)) ([]protoreflect.FileDescriptor, error) {
	r := &reflector{ctx: ctx, conn: conn, failed: failed}
	if err := r.open(); err != nil {
		return nil, fmt.Errorf("can't list services: %w", err)
	}
	defer func() { _ = r.stream.CloseSend() }()
	res, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
	if err != nil {
		return nil, fmt.Errorf("can't list services: %w", err)
	}
	fs := fileSet{files: map[string]*descriptorpb.FileDescriptorProto{}}
	var pending []string
	for _, s := range res.GetListServicesResponse().GetService() {
		if fs.hasService(s.GetName()) {
			continue
		}
		res, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s.GetName()}})
		if err != nil {
			return nil, fmt.Errorf("can't get method on service %q: %w", s.GetName(), err)
		}
		deps, err := fs.add(res.GetFileDescriptorResponse().GetFileDescriptorProto())
		if err != nil {
			return nil, err
		}
		pending = append(pending, deps...)
	}
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, seen := fs.files[name]; seen {
			continue
		}
		res, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: name}})
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", name, err)
		}
		deps, err := fs.add(res.GetFileDescriptorResponse().GetFileDescriptorProto())
		if err != nil {
			return nil, err
		}
		pending = append(pending, deps...)
	}
	return filesOf(fs.order)
}

// reflector is one connect's conversation with the reflection service:
// its current stream, opened again when a request fails.
type reflector struct {
	ctx    context.Context
	conn   *grpc.ClientConn
	failed func(start time.Time, err error)
	stream rpb.ServerReflection_ServerReflectionInfoClient
	start  time.Time // when the stream was opened
}

// open opens a new reflection stream.
func (r *reflector) open() error {
	var err error
	r.start = time.Now()
	r.stream, err = rpb.NewServerReflectionClient(r.conn).ServerReflectionInfo(r.ctx)
	return err
}

// send sends req on the stream and reads its answer.
func (r *reflector) send(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	if err := r.stream.Send(req); err != nil {
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		// The stream ended: its status says why.
	}
	return r.stream.Recv()
}

// ask sends req, on new streams after a failed one, up to
// reflectAttempts in all, reporting each failed stream; an error answer
// of the service is an error too.
func (r *reflector) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	res, err := r.send(req)
	for attempt := 1; err != nil; attempt++ {
		r.failed(r.start, err)
		if attempt == reflectAttempts {
			return nil, err
		}
		if err := r.open(); err != nil {
			return nil, err
		}
		res, err = r.send(req)
	}
	if e := res.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("%s (code %d)", e.GetErrorMessage(), e.GetErrorCode())
	}
	return res, nil
}

// fileSet gathers the file descriptors reflection sends, each once, in
// the order they came.
type fileSet struct {
	files map[string]*descriptorpb.FileDescriptorProto
	order []*descriptorpb.FileDescriptorProto
}

// hasService reports whether a file of the set defines the service of
// the full name name.
func (fs *fileSet) hasService(name string) bool {
	for _, fd := range fs.order {
		for _, sd := range fd.GetService() {
			if full := fd.GetPackage() + "." + sd.GetName(); full == name || fd.GetPackage() == "" && sd.GetName() == name {
				return true
			}
		}
	}
	return false
}

// add decodes raw descriptors and keeps the new ones, returning their
// imports.
func (fs *fileSet) add(raw [][]byte) ([]string, error) {
	var deps []string
	for _, b := range raw {
		fd := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fd); err != nil {
			return nil, err
		}
		if _, seen := fs.files[fd.GetName()]; seen {
			continue
		}
		fs.files[fd.GetName()] = fd
		fs.order = append(fs.order, fd)
		deps = append(deps, fd.GetDependency()...)
	}
	return deps, nil
}
