package grpc

import (
	"context"
	"fmt"

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

// reflectFiles asks the server's reflection service (grpc.reflection.v1)
// for every service it offers and the files that define them, with their
// imports.
func reflectFiles(ctx context.Context, conn *grpc.ClientConn) ([]protoreflect.FileDescriptor, error) {
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	ask := func(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
		if err := stream.Send(req); err != nil {
			return nil, err
		}
		res, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		if e := res.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("%s (code %d)", e.GetErrorMessage(), e.GetErrorCode())
		}
		return res, nil
	}
	res, err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("service %s: %w", s.GetName(), err)
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
