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
// for every service it offers and the files that define them, with their
// imports. A request whose stream fails is sent again on a new stream, up
// to reflectAttempts in all; failed reports each failed stream, which k6
// records in grpc_req_duration.
func reflectFiles(ctx context.Context, conn *grpc.ClientConn, failed func(start time.Time, err error)) ([]protoreflect.FileDescriptor, error) {
	var stream rpb.ServerReflection_ServerReflectionInfoClient
	var start time.Time
	open := func() error {
		var err error
		start = time.Now()
		stream, err = rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		return err
	}
	if err := open(); err != nil {
		return nil, fmt.Errorf("can't list services: %w", err)
	}
	defer func() { _ = stream.CloseSend() }()
	send := func(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
		if err := stream.Send(req); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			// The stream ended: its status says why.
		}
		return stream.Recv()
	}
	ask := func(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
		res, err := send(req)
		for attempt := 1; err != nil; attempt++ {
			failed(start, err)
			if attempt == reflectAttempts {
				return nil, err
			}
			if err := open(); err != nil {
				return nil, err
			}
			res, err = send(req)
		}
		if e := res.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("%s (code %d)", e.GetErrorMessage(), e.GetErrorCode())
		}
		return res, nil
	}
	res, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	if err != nil {
		return nil, fmt.Errorf("can't list services: %w", err)
	}
	files := map[string]*descriptorpb.FileDescriptorProto{}
	var order []*descriptorpb.FileDescriptorProto
	add := func(raw [][]byte) ([]string, error) {
		var deps []string
		for _, b := range raw {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return nil, err
			}
			if _, seen := files[fd.GetName()]; seen {
				continue
			}
			files[fd.GetName()] = fd
			order = append(order, fd)
			deps = append(deps, fd.GetDependency()...)
		}
		return deps, nil
	}
	var pending []string
	for _, s := range res.GetListServicesResponse().GetService() {
		if s.GetName() == "grpc.reflection.v1.ServerReflection" || s.GetName() == "grpc.reflection.v1alpha.ServerReflection" {
			continue
		}
		r, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s.GetName()}})
		if err != nil {
			return nil, fmt.Errorf("can't get method on service %q: %w", s.GetName(), err)
		}
		deps, err := add(r.GetFileDescriptorResponse().GetFileDescriptorProto())
		if err != nil {
			return nil, err
		}
		pending = append(pending, deps...)
	}
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, seen := files[name]; seen {
			continue
		}
		r, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: name}})
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", name, err)
		}
		deps, err := add(r.GetFileDescriptorResponse().GetFileDescriptorProto())
		if err != nil {
			return nil, err
		}
		pending = append(pending, deps...)
	}
	return filesOf(order)
}
