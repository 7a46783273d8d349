// Package pbdecode renders protobuf records as text: without a schema as
// protoc --decode_raw does (field numbers, wire types, nested messages
// guessed as protoc guesses them), and with one (loaded by package
// pbschema from .proto sources or a descriptor set, see [UseSchemas]) as
// protojson. It reads the wire format
// directly, so that every byte of a record shows: fields the schema does
// not define appear raw where they sit, and a malformed field ends the
// record with an error, after what came before it.
//
// # Without a schema (--decode protobuf)
//
// Text is protoc --decode_raw's: one field a line, "N: VALUE" for varints
// (unsigned decimal), fixed32 and fixed64 (0x and 8 or 16 hex digits) and
// strings ("..." escaped as protoc's CEscape escapes, except that
// printable UTF-8 characters stay themselves), "N {" ... "}" with two
// spaces of indent for a length-delimited field that parses as a message
// (not empty, every byte a field, within 10 levels) and for groups. JSON
// Lines are {"n":N,"fields":[{"field":N,"varint"|"fixed32"|"fixed64":V},
// {"field":N,"bytes":"..."}, {"field":N,"message"|"group":[...]}]}, bytes
// as a string when UTF-8, else {"base64":"..."}. A record that is not a
// message shows the fields before the fault, then "error: malformed
// field at byte B, the rest raw: "..."" (JSON: "error" and "rest"), and
// is a misfit.
//
// # With a schema (--decode protobuf:MESSAGE --proto FILE)
//
// One JSON object a record, as protojson writes it: fields by JSON name in
// declaration order, 64-bit integers as strings, enums by name, bytes in
// base64, maps as objects with sorted keys, Timestamp, Duration,
// wrappers, Struct, Value, ListValue, FieldMask, Empty and Any in their
// special forms; text output separates with ": " and ", " for grep, JSON
// Lines are compact and start with "n". The proto rules apply: a field
// given twice keeps its last value, a message field given twice merges,
// a oneof keeps the member set last. Fields the schema does not define
// (or that come with another wire type) show in "#unknown" in the
// schemaless JSON form, where they sit; an Any whose type the schema lacks
// keeps its bytes in "#value". A malformed field adds "#error" and
// "#rest" (the bytes from the fault on) to its message, closes the
// object, adds an "error: ..." line in text, and makes the record a
// misfit.
package pbdecode

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/recfs/recfs/codec/decode"
)

// Raw is the schemaless decoder (--decode protobuf).
var Raw decode.Decoder = decode.Func(func(w *decode.Writer, rec *decode.Record) error {
	return writeRaw(w, rec.Payload)
})

// Resolver finds the descriptors of a schema by full name (an Any's
// type); a *protoregistry.Files is one.
type Resolver interface {
	FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error)
}

// Schemas is a loaded schema: its descriptors and its message types by
// name (package pbschema's Schema).
type Schemas interface {
	Resolver
	// Message returns the message type called name: a full name, or a
	// name that ends only one full name.
	Message(name string) (protoreflect.MessageDescriptor, error)
}

// Open reads a file named by path; the caller resolves paths (cmd opens
// files on disk).
type Open func(path string) (io.ReadCloser, error)

// Loader loads the schema of --proto files protos, their imports found
// in importPaths.
type Loader func(protos, importPaths []string, open Open) (Schemas, error)

// loader is what UseSchemas set; nil leaves --decode protobuf:MESSAGE out.
var loader Loader

// UseSchemas makes l the loader of --proto schemas. Package codec/decoders
// sets package pbschema's in the default build; a build without it (tag
// recfs_lean) renders schemaless protobuf only.
func UseSchemas(l Loader) { loader = l }

// ErrNoSchemas reports --decode protobuf:MESSAGE in a build that leaves
// the schema loader out.
var ErrNoSchemas = errors.New("--decode protobuf:MESSAGE needs the .proto support this recfs leaves out (the lean build): run recfs-full")

// Decoder renders records of one message type as protojson.
type Decoder struct {
	schema Resolver
	md     protoreflect.MessageDescriptor
}

// NewDecoder returns the decoder of records of message md, the other
// types of its schema (an Any's) found through r.
func NewDecoder(r Resolver, md protoreflect.MessageDescriptor) *Decoder {
	return &Decoder{schema: r, md: md}
}

// Decode writes rec as one JSON object.
func (d *Decoder) Decode(w *decode.Writer, rec *decode.Record) error {
	r := renderer{s: spaced, schema: d.schema, copies: 4*len(rec.Payload) + 1<<20}
	m := src{b: rec.Payload}
	w.Begin()
	switch {
	case !w.JSON():
		w.B = r.message(w.B, d.md, m, 0)
	case wellKnown()[d.md.FullName()] != nil:
		r.s = compact
		w.Key("value")
		w.B = r.message(w.B, d.md, m, 0)
	default:
		r.s = compact
		w.B, _ = r.members(w.B, d.md, m, 0, false)
	}
	w.End()
	if r.err == nil {
		return nil
	}
	if !w.JSON() {
		w.Begin()
		w.B = append(w.B, "error: "...)
		w.B = append(w.B, r.err.Error()...)
		w.End()
	}
	return decode.Misfit(-1, "not a %s: %v", d.md.FullName(), r.err)
}

// Prepare is the registry's constructor: --decode protobuf without an
// argument is the schemaless decoder; protobuf:MESSAGE loads --proto (and
// --proto-path) once and renders MESSAGE.
func Prepare(p *decode.Params) (decode.Factory, error) {
	if p.Arg == "" {
		if len(p.Proto) > 0 {
			return nil, errors.New("--proto needs a message: --decode protobuf:MESSAGE")
		}
		return decode.Static(Raw), nil
	}
	if p.Open == nil {
		return nil, errors.New("no files can be read here")
	}
	if len(p.Proto) == 0 {
		return nil, errors.New("no --proto given")
	}
	if loader == nil {
		return nil, ErrNoSchemas
	}
	s, err := loader(p.Proto, p.ProtoPath, p.Open)
	if err != nil {
		return nil, err
	}
	md, err := s.Message(p.Arg)
	if err != nil {
		return nil, fmt.Errorf("--decode protobuf:%s: %w", p.Arg, err)
	}
	return decode.Static(NewDecoder(s, md)), nil
}
