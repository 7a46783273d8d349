// Package pbschema loads protobuf schemas for --decode protobuf:MESSAGE:
// .proto sources compiled in-process (protocompile) and compiled
// descriptor sets (protoc -o). It is apart from pbdecode, which renders
// with what it loads, because linking protocompile and protodesc costs
// every process of the binary milliseconds of package initialisation:
// codec/decoders registers it in the default (full) build only.
package pbschema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// maxSchemaFile bounds a descriptor set read whole.
const maxSchemaFile = 64 << 20

// Schema is a set of message types loaded from .proto sources or
// descriptor sets.
type Schema struct {
	files *protoregistry.Files
}

// Open reads a file named by path; the caller resolves paths (cmd opens
// files on disk).
type Open func(path string) (io.ReadCloser, error)

// Load loads the message types of the files protos: each is a
// .proto source, parsed and linked in-process (its imports found in
// importPaths, or beside it without any, and the well-known types built
// in), or a compiled descriptor set (protoc -o, --descriptor_set_out),
// recognised by its bytes.
func Load(protos, importPaths []string, open Open) (*Schema, error) {
	if len(protos) == 0 {
		return nil, errors.New("no --proto given")
	}
	s := &Schema{files: new(protoregistry.Files)}
	var sources []string
	for _, p := range protos {
		if strings.HasSuffix(p, ".proto") {
			sources = append(sources, p)
			continue
		}
		if err := s.addDescriptorSet(p, open); err != nil {
			return nil, err
		}
	}
	if len(sources) > 0 {
		if err := s.compile(sources, importPaths, open); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addDescriptorSet adds the files of the FileDescriptorSet in file p.
func (s *Schema) addDescriptorSet(p string, open Open) error {
	rc, err := open(p)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxSchemaFile+1))
	rc.Close()
	if err != nil {
		return err
	}
	if len(b) > maxSchemaFile {
		return fmt.Errorf("%s: larger than %d bytes", p, maxSchemaFile)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil || len(set.File) == 0 {
		return fmt.Errorf("%s: neither a .proto file nor a descriptor set (protoc -o): %v", p, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	var regErr error
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if _, err := s.files.FindFileByPath(fd.Path()); err == nil {
			return true // given twice
		}
		regErr = s.files.RegisterFile(fd)
		return regErr == nil
	})
	return regErr
}

// compile parses and links the .proto sources.
func (s *Schema) compile(sources, importPaths []string, open Open) error {
	names := make([]string, len(sources))
	paths := importPaths
	for i, src := range sources {
		names[i] = path.Base(src)
		if len(importPaths) == 0 {
			paths = appendUnique(paths, path.Dir(src))
			continue
		}
		names[i] = ""
		for _, ip := range importPaths {
			if rel, ok := strings.CutPrefix(path.Clean(src), path.Clean(ip)+"/"); ok {
				names[i] = rel
				break
			}
		}
		if names[i] == "" {
			return fmt.Errorf("--proto %s is in none of the --proto-path directories", src)
		}
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths, Accessor: open}),
		Reporter: reporter.NewReporter(nil, nil), // the first error fails
	}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := s.register(f); err != nil {
			return err
		}
	}
	return nil
}

// register adds fd and its imports, once each.
func (s *Schema) register(fd protoreflect.FileDescriptor) error {
	if _, err := s.files.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imps := fd.Imports()
	for i := 0; i < imps.Len(); i++ {
		if err := s.register(imps.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return s.files.RegisterFile(fd)
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// FindDescriptorByName looks a descriptor up by its full name (an Any's
// type).
func (s *Schema) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	return s.files.FindDescriptorByName(name)
}

// Files returns the loaded files.
func (s *Schema) Files() *protoregistry.Files { return s.files }

// Message returns the message type called name: its full name
// ("pkg.Msg"), or a name that ends only one full name ("Msg").
func (s *Schema) Message(name string) (protoreflect.MessageDescriptor, error) {
	name = strings.TrimPrefix(name, ".")
	if d, err := s.files.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
		if md, ok := d.(protoreflect.MessageDescriptor); ok {
			return md, nil
		}
		return nil, fmt.Errorf("%s is a %T, not a message", name, d)
	}
	var found []protoreflect.MessageDescriptor
	s.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		eachMessage(fd.Messages(), func(md protoreflect.MessageDescriptor) {
			if n := string(md.FullName()); n == name || strings.HasSuffix(n, "."+name) {
				found = append(found, md)
			}
		})
		return true
	})
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("no message %s in the --proto files", name)
	}
	var names []string
	for _, md := range found {
		names = append(names, string(md.FullName()))
	}
	return nil, fmt.Errorf("message %s is ambiguous: %s", name, strings.Join(names, ", "))
}

// eachMessage calls fn with every message of ms and their nested ones.
func eachMessage(ms protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := 0; i < ms.Len(); i++ {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		fn(md)
		eachMessage(md.Messages(), fn)
	}
}
