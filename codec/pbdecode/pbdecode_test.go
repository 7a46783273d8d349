package pbdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/pbdecode/pbschema"
)

func openOS(p string) (io.ReadCloser, error) { return os.Open(p) }

// The tests load schemas as the default build does (codec/decoders
// registers pbschema's loader, which this package cannot import).
func init() { UseSchemas(loadSchema) }

func loadSchema(protos, importPaths []string, open Open) (Schemas, error) {
	s, err := pbschema.Load(protos, importPaths, pbschema.Open(open))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// shop loads testdata/shop.proto and returns its Order type.
func shop(t testing.TB) (*pbschema.Schema, protoreflect.MessageDescriptor) {
	t.Helper()
	s, err := pbschema.Load([]string{"testdata/shop.proto"}, nil, openOS)
	if err != nil {
		t.Fatal(err)
	}
	md, err := s.Message("Order")
	if err != nil {
		t.Fatal(err)
	}
	return s, md
}

// orders are Orders in protojson, every kind of field among them.
var orders = []string{
	`{}`,
	`{"id": "o-1 hello world", "count": -3, "totalCents": "123456789012", "u32": 4000000000, "u64": "18446744073709551615",
	  "s32": -7, "s64": "-9000000000", "f32": 7, "f64": "8", "sf32": -9, "sf64": "-10", "ratio": 0.25, "price": 1e+300,
	  "gift": true, "blob": "/wD+", "status": "SHIPPED", "note": ""}`,
	`{"items": [{"sku": "a", "weight": 1.5, "labels": ["x", "y"]}, {"sku": "b"}], "packed": [1, -2, 3], "unpacked": ["4", "-5"],
	  "counters": {"z": "1", "a": "-2", "m": "0"}, "bySlot": {"3": {"sku": "c"}, "-1": {}}, "card": "4242", "tags": ["t1", "t2"]}`,
	`{"voucher": "77", "created": "2024-05-01T10:00:00.120Z", "ttl": "-1.500s",
	  "extra": {"@type": "type.googleapis.com/shop.Item", "sku": "in-any"},
	  "attrs": {"k": [1, "two", true, null, {"n": 2.5}]}, "maybe": "0", "mask": "items.sku,totalCents",
	  "parent": {"id": "p", "parent": {"id": "pp", "ratio": "NaN", "price": "-Infinity"}}}`,
	`{"extra": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "3s"}, "created": "1970-01-01T00:00:00Z"}`,
}

// TestSchemaLikeProtojson: every order renders to what protojson writes
// for it (compared as JSON values), in text and in JSON Lines.
func TestSchemaLikeProtojson(t *testing.T) {
	s, md := shop(t)
	d := NewDecoder(s, md)
	for i, o := range orders {
		m := dynamicpb.NewMessage(md)
		if err := (protojson.UnmarshalOptions{Resolver: dynamicpb.NewTypes(s.Files())}).Unmarshal([]byte(o), m); err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := protojson.MarshalOptions{Resolver: dynamicpb.NewTypes(s.Files())}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []decode.Output{{}, {JSON: true}} {
			w := decode.NewWriter(nil, out, int64(i))
			if err := d.Decode(w, &decode.Record{N: int64(i), Payload: raw}); err != nil {
				t.Fatalf("order %d: %v\n%s", i, err, w.B)
			}
			if bytes.Count(w.B, []byte("\n")) != 1 {
				t.Fatalf("order %d: not one line: %s", i, w.B)
			}
			var got, exp map[string]any
			if err := json.Unmarshal(w.B, &got); err != nil {
				t.Fatalf("order %d: %v\n%s", i, err, w.B)
			}
			if err := json.Unmarshal(want, &exp); err != nil {
				t.Fatal(err)
			}
			if out.JSON {
				if got["n"] != float64(i) {
					t.Fatalf("order %d: n is %v", i, got["n"])
				}
				delete(got, "n")
			}
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("order %d (%+v):\n%s\nprotojson:\n%s", i, out, w.B, want)
			}
		}
	}
}

// TestSchemaText: the text form, with its grep-friendly spacing and
// declaration order.
func TestSchemaText(t *testing.T) {
	s, md := shop(t)
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(`{"id": "o-1", "count": 2, "status": "PAID", "counters": {"b": "2", "a": "1"}}`), m); err != nil {
		t.Fatal(err)
	}
	raw, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	w := decode.NewWriter(nil, decode.Output{Number: true}, 5)
	if err := NewDecoder(s, md).Decode(w, &decode.Record{N: 5, Payload: raw}); err != nil {
		t.Fatal(err)
	}
	if want := "000005\t" + `{"id": "o-1", "count": 2, "status": "PAID", "counters": {"a": "1", "b": "2"}}` + "\n"; string(w.B) != want {
		t.Errorf("%s\nwant\n%s", w.B, want)
	}
}

// TestSchemaUnknownAndMalformed: fields the schema lacks show raw where
// they sit; a malformed field keeps what came before, adds the rest raw
// and an error line, and is a misfit; proto merge rules hold.
func TestSchemaUnknownAndMalformed(t *testing.T) {
	s, md := shop(t)
	d := NewDecoder(s, md)
	render := func(b []byte) (string, error) {
		w := decode.NewWriter(nil, decode.Output{}, 0)
		err := d.Decode(w, &decode.Record{Payload: b})
		return string(w.B), err
	}
	item := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "a")
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "id")
	b = protowire.AppendTag(b, 99, protowire.VarintType) // not in the schema
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, 2, protowire.BytesType) // count with the wrong wire type
	b = protowire.AppendString(b, "x")
	b = protowire.AppendTag(b, 31, protowire.BytesType) // parent given twice: merged
	b = protowire.AppendBytes(b, item)
	b = protowire.AppendTag(b, 31, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 9))
	b = protowire.AppendTag(b, 22, protowire.BytesType) // card, then voucher: voucher wins
	b = protowire.AppendString(b, "4242")
	b = protowire.AppendTag(b, 23, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	got, err := render(b)
	want := `{"id": "id", "voucher": "1", "parent": {"id": "a", "count": 9}, "#unknown": [{"field":99,"varint":5},{"field":2,"bytes":"x"}]}` + "\n"
	if err != nil || got != want {
		t.Errorf("unknown fields:\n%s%v\nwant:\n%s", got, err, want)
	}
	bad := append(bytes.Clone(b[:4]), 0x10, 0xff) // count, then a truncated varint
	got, err = render(bad)
	if !errors.Is(err, decode.ErrMisfit) || !strings.HasPrefix(got, `{"id": "id", "#error": "malformed field at byte 4", "#rest": {"base64":"EP8="}}`+"\nerror: malformed field at byte 4\n") {
		t.Errorf("malformed:\n%s%v", got, err)
	}
}

// TestRaw: the schemaless text is protoc --decode_raw's.
func TestRaw(t *testing.T) {
	var inner []byte
	inner = protowire.AppendTag(inner, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, "héllo\n\x01'")
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 150)
	b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 0x3f800000)
	b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, inner)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendString(b, "plain text")
	b = protowire.AppendTag(b, 6, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 6, protowire.EndGroupType)
	w := decode.NewWriter(nil, decode.Output{}, 0)
	if err := Raw.Decode(w, &decode.Record{Payload: b}); err != nil {
		t.Fatal(err)
	}
	want := "1: 150\n2: 0x3f800000\n3: 0x0000000000000001\n4 {\n  1: \"héllo\\n\\001\\'\"\n}\n5: \"plain text\"\n6 {\n  1: 1\n}\n"
	if string(w.B) != want {
		t.Errorf("%s\nwant\n%s", w.B, want)
	}
	w = decode.NewWriter(nil, decode.Output{JSON: true}, 2)
	if err := Raw.Decode(w, &decode.Record{Payload: b[:len(b)-3]}); !errors.Is(err, decode.ErrMisfit) {
		t.Fatalf("truncated group: %v", err)
	}
	if want := `{"n":2,"fields":[{"field":1,"varint":150},{"field":2,"fixed32":1065353216},{"field":3,"fixed64":1},` +
		`{"field":4,"message":[{"field":1,"bytes":"héllo\n\u0001'"}]},{"field":5,"bytes":"plain text"}],"error":"malformed field at byte 42","rest":{"base64":"Mw=="}}` + "\n"; string(w.B) != want {
		t.Errorf("%s\nwant\n%s", w.B, want)
	}
}

// TestRawHostile: a nesting bomb, a packed field of ten million values
// (fewer under the race detector) and a giant varint stay within
// the output bound.
func TestRawHostile(t *testing.T) {
	bomb := nestingBomb(20000, 1)
	orderBomb := nestingBomb(20000, 31) // Order.parent
	packed := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), bytes.Repeat([]byte{8, 1}, hostileElems/2))
	giant := append(protowire.AppendTag(nil, 1, protowire.VarintType), bytes.Repeat([]byte{0xff}, 20)...)
	schemaPacked := protowire.AppendBytes(protowire.AppendTag(nil, 18, protowire.BytesType), bytes.Repeat([]byte{1}, hostileElems))
	s, md := shop(t)
	for _, tc := range []struct {
		name   string
		rec    []byte
		dec    decode.Decoder
		misfit bool
	}{
		{"nesting bomb raw", bomb, Raw, false},
		{"packed raw", packed, Raw, false},
		{"giant varint raw", giant, Raw, true},
		{"nesting bomb schema", orderBomb, NewDecoder(s, md), true},
		{"giant varint schema", giant, NewDecoder(s, md), true},
		{"packed schema", schemaPacked, NewDecoder(s, md), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, o := range []decode.Output{{}, {JSON: true}} {
				sess := decode.NewSession(tc.dec, decode.SessionOptions{Name: "p", Output: o})
				out, err := sess.Render(nil, recs{tc.rec}, 0, 0)
				if errors.Is(err, decode.ErrLimit) || tc.misfit != errors.Is(err, decode.ErrMisfit) {
					t.Errorf("%+v: %d bytes, %v", o, len(out), err)
				}
			}
		})
	}
}

// nestingBomb returns depth messages nested in field num of each other.
func nestingBomb(depth int, num protowire.Number) []byte {
	sizes := make([]int, depth+1) // sizes[i]: bytes of level i and inside
	for i := depth - 1; i >= 0; i-- {
		sizes[i] = protowire.SizeTag(num) + protowire.SizeVarint(uint64(sizes[i+1])) + sizes[i+1]
	}
	b := make([]byte, 0, sizes[0])
	for i := 0; i < depth; i++ {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizes[i+1]))
	}
	return b
}

type recs = decode.Slice

// TestPrepare: the registry's constructor checks its parameters.
func TestPrepare(t *testing.T) {
	if _, err := Prepare(&decode.Params{Proto: []string{"x.proto"}, Open: openOS}); err == nil {
		t.Error("--proto without a message accepted")
	}
	if _, err := Prepare(&decode.Params{Arg: "Order"}); err == nil {
		t.Error("a message without --proto accepted")
	}
	if _, err := Prepare(&decode.Params{Arg: "Nope", Proto: []string{"testdata/shop.proto"}, Open: openOS}); err == nil || !strings.Contains(err.Error(), "no message Nope") {
		t.Errorf("unknown message: %v", err)
	}
	if _, err := Prepare(&decode.Params{Arg: "shop.Item", Proto: []string{"testdata/shop.proto"}, ProtoPath: []string{"testdata"}, Open: openOS}); err != nil {
		t.Errorf("--proto-path: %v", err)
	}
}

// TestPrepareWithoutSchemas: a build without a schema loader (the lean
// link) refuses protobuf:MESSAGE with ErrNoSchemas and still decodes
// without a schema. Not parallel: it swaps the package's loader.
func TestPrepareWithoutSchemas(t *testing.T) {
	defer UseSchemas(loader)
	UseSchemas(nil)
	if _, err := Prepare(&decode.Params{Arg: "shop.Item", Proto: []string{"testdata/shop.proto"}, Open: openOS}); !errors.Is(err, ErrNoSchemas) {
		t.Errorf("protobuf:MESSAGE without a loader: %v, want ErrNoSchemas", err)
	}
	if _, err := Prepare(&decode.Params{}); err != nil {
		t.Errorf("schemaless without a loader: %v", err)
	}
}

func FuzzRaw(f *testing.F) {
	f.Add([]byte("\x08\x96\x01\x12\x03abc\x1a\x02\x08\x01"))
	f.Add([]byte("\x33\x08\x01\x34"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []decode.Output{{}, {JSON: true}, {Number: true}} {
			w := decode.NewWriter(nil, o, 0)
			err := Raw.Decode(w, &decode.Record{Payload: b})
			if err != nil && !errors.Is(err, decode.ErrMisfit) {
				t.Fatal(err)
			}
			if len(w.B) > decode.MaxOutput(len(b)) {
				t.Fatalf("%d bytes for %d", len(w.B), len(b))
			}
			if o.JSON {
				var v any
				if err := json.Unmarshal(w.B, &v); err != nil {
					t.Fatalf("%s: %v", w.B, err)
				}
			}
		}
	})
}

func FuzzSchema(f *testing.F) {
	s, md := shop(f)
	d := NewDecoder(s, md)
	for _, o := range orders {
		m := dynamicpb.NewMessage(md)
		if err := (protojson.UnmarshalOptions{Resolver: dynamicpb.NewTypes(s.Files())}).Unmarshal([]byte(o), m); err != nil {
			f.Fatal(err)
		}
		raw, _ := proto.Marshal(m)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []decode.Output{{}, {JSON: true}} {
			w := decode.NewWriter(nil, o, 0)
			err := d.Decode(w, &decode.Record{Payload: b})
			if err != nil && !errors.Is(err, decode.ErrMisfit) {
				t.Fatal(err)
			}
			if len(w.B) > decode.MaxOutput(len(b)) {
				t.Fatalf("%d bytes for %d", len(w.B), len(b))
			}
			line, _, _ := bytes.Cut(w.B, []byte("\n"))
			var v map[string]any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("%s: %v", w.B, err)
			}
		}
	})
}

// benchOrder is a serialized Order of several field kinds.
func benchOrder(b *testing.B, md protoreflect.MessageDescriptor, s *pbschema.Schema) []byte {
	m := dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{Resolver: dynamicpb.NewTypes(s.Files())}).Unmarshal([]byte(orders[2]), m); err != nil {
		b.Fatal(err)
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkDecode(b *testing.B) {
	s, md := shop(b)
	rec := &decode.Record{Payload: benchOrder(b, md, s)}
	for name, d := range map[string]decode.Decoder{"raw": Raw, "schema": NewDecoder(s, md)} {
		b.Run(name, func(b *testing.B) {
			w := decode.NewWriter(nil, decode.Output{}, 0)
			b.SetBytes(int64(len(rec.Payload)))
			b.ReportAllocs()
			for b.Loop() {
				w.B = w.B[:0]
				if err := d.Decode(w, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
