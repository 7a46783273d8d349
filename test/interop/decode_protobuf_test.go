package interop

// --decode protobuf against protoc (Debian's protobuf-compiler): the
// schemaless text agrees with protoc --decode_raw line by line, field by
// field, on random messages (nested messages, strings, groups, fixed
// values, messages nested past protoc's guessing depth) and refuses what
// protoc cannot parse; the schema's protojson agrees field by field with
// protoc --decode on random messages of every field kind, through a
// .proto source and through a descriptor set.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/pbdecode"
)

// needProtoc returns protoc's path or skips the test.
func needProtoc(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc (Debian's protobuf-compiler, which .ci/run installs) is not installed")
	}
	return p
}

// protoc runs protoc with args on stdin; ok is false when it exits
// non-zero.
func protoc(t *testing.T, stdin []byte, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(needProtoc(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String() + errb.String(), err == nil
}

// randRawMessage writes a random message: varints, fixed values, strings
// (text, UTF-8, binary, empty), nested messages (deeper than protoc
// guesses sometimes) and groups.
func randRawMessage(rng *rand.Rand, depth int) []byte {
	var b []byte
	for i := rng.Intn(6); i >= 0; i-- {
		num := protowire.Number(1 + rng.Intn(20))
		if rng.Intn(30) == 0 {
			num = protowire.MaxValidNumber
		}
		switch k := rng.Intn(9); {
		case k < 2:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, rng.Uint64()>>uint(rng.Intn(64)))
		case k == 2:
			b = protowire.AppendTag(b, num, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, rng.Uint32())
		case k == 3:
			b = protowire.AppendTag(b, num, protowire.Fixed64Type)
			b = protowire.AppendFixed64(b, rng.Uint64())
		case k == 4 && depth < 13:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, randRawMessage(rng, depth+1))
		case k == 5 && depth < 13:
			b = protowire.AppendTag(b, num, protowire.StartGroupType)
			b = append(b, randRawMessage(rng, depth+1)...)
			b = protowire.AppendTag(b, num, protowire.EndGroupType)
		default:
			texts := []string{"", "plain text", "héllo wörld ✓", "quote\" and ' and \\", "tab\tnew\nline", "\x00\x01\xff\xfe", "{\"json\": 1}"}
			s := texts[rng.Intn(len(texts))]
			if rng.Intn(3) == 0 {
				buf := make([]byte, rng.Intn(12))
				rng.Read(buf)
				s = string(buf)
			}
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	return b
}

// rawLine is one line of --decode_raw text: its depth and content, a
// string value as hex of its bytes.
type rawLine struct {
	depth   int
	content string
}

// parseRawText parses --decode_raw text, unescaping strings (protoc
// escapes every byte outside ASCII; recfs keeps printable UTF-8).
func parseRawText(t *testing.T, text string) []rawLine {
	t.Helper()
	var out []rawLine
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		trimmed := strings.TrimLeft(l, " ")
		rl := rawLine{depth: (len(l) - len(trimmed)) / 2, content: trimmed}
		if num, v, ok := strings.Cut(trimmed, ": \""); ok && strings.HasSuffix(v, "\"") {
			b, err := cUnescape(v[:len(v)-1])
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			rl.content = num + ": bytes " + hex.EncodeToString(b)
		}
		out = append(out, rl)
	}
	return out
}

// cUnescape undoes C escapes (\n \r \t \" \' \\ and octal).
func cUnescape(s string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		if i == len(s) {
			return nil, errors.New("trailing backslash")
		}
		switch c := s[i]; c {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '"', '\'', '\\':
			out = append(out, c)
		default:
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("escape \\%c", c)
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 8)
			out = append(out, byte(v))
			i = j - 1
		}
	}
	return out, nil
}

// renderRaw renders rec with the schemaless decoder.
func renderRaw(rec []byte) (string, error) {
	w := decode.NewWriter(nil, decode.Output{}, 0)
	err := pbdecode.Raw.Decode(w, &decode.Record{Payload: rec})
	return string(w.B), err
}

func TestDecodeProtobufRawVsProtoc(t *testing.T) {
	needProtoc(t)
	checked, refused := 0, 0
	for _, seed := range testSeeds(t, 2) {
		rng := rand.New(rand.NewSource(seed))
		for i := 0; i < 60; i++ {
			rec := randRawMessage(rng, 0)
			if i%5 == 4 && len(rec) > 2 {
				rec = rec[:rng.Intn(len(rec))] // often not a message any more
			}
			want, ok := protoc(t, rec, "--decode_raw")
			got, err := renderRaw(rec)
			if !ok {
				if err == nil {
					t.Fatalf("seed %d record %d (%x): protoc fails (%s) but recfs decodes:\n%s", seed, i, rec, want, got)
				}
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("seed %d record %d (%x): %v; protoc:\n%s", seed, i, rec, err, want)
			}
			if g, w := parseRawText(t, got), parseRawText(t, want); fmt.Sprint(g) != fmt.Sprint(w) {
				k := 0
				for k < min(len(g), len(w)) && g[k] == w[k] {
					k++
				}
				t.Fatalf("seed %d record %d (%x): line %d differs:\nrecfs:\n%s\nprotoc --decode_raw:\n%s", seed, i, rec, k, got, want)
			}
			checked++
		}
	}
	if checked < 50 || refused == 0 {
		t.Fatalf("%d messages agree, %d refused by both: want more of each", checked, refused)
	}
	t.Logf("%d messages agree with protoc --decode_raw, %d refused by both", checked, refused)
}

// shopDir is the directory of the test schema (the product's testdata).
const shopDir = "../../codec/pbdecode/testdata"

// shopFiles compiles the test schema with protoc into a descriptor set
// and returns its path and files.
func shopFiles(t *testing.T) (string, *protoregistry.Files) {
	t.Helper()
	set := filepath.Join(t.TempDir(), "shop.pb")
	if out, ok := protoc(t, nil, "--proto_path="+shopDir, "--include_imports", "--descriptor_set_out="+set, "shop.proto"); !ok {
		t.Fatalf("protoc -o: %s", out)
	}
	b, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &fds); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatal(err)
	}
	return set, files
}

// randFill sets random values on m's fields (and its messages' fields, to
// depth 3), well-known types as their own forms require.
func randFill(rng *rand.Rand, m protoreflect.Message, files *protoregistry.Files, depth int) {
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		m.Set(md.Fields().ByNumber(1), protoreflect.ValueOfInt64(rng.Int63n(4e9)-1e9))
		m.Set(md.Fields().ByNumber(2), protoreflect.ValueOfInt32(int32(rng.Intn(4))*250_000_000))
		return
	case "google.protobuf.Duration":
		s := rng.Int63n(1e6) - 5e5
		n := int32(rng.Intn(1000)) * 1_000_000
		if s < 0 {
			n = -n
		}
		m.Set(md.Fields().ByNumber(1), protoreflect.ValueOfInt64(s))
		m.Set(md.Fields().ByNumber(2), protoreflect.ValueOfInt32(n))
		return
	case "google.protobuf.Any":
		item, _ := files.FindDescriptorByName("shop.Item")
		im := dynamicpb.NewMessage(item.(protoreflect.MessageDescriptor))
		randFill(rng, im, files, depth+1)
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(im)
		m.Set(md.Fields().ByNumber(1), protoreflect.ValueOfString("type.googleapis.com/shop.Item"))
		m.Set(md.Fields().ByNumber(2), protoreflect.ValueOfBytes(b))
		return
	case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue":
		s := `{"a": 1, "b": ["x", true, null], "c": {"d": -2.5}}`
		if err := protojson.Unmarshal([]byte(s), m.Interface()); err != nil && md.FullName() == "google.protobuf.Struct" {
			panic(err)
		}
		return
	case "google.protobuf.FieldMask":
		l := m.Mutable(md.Fields().ByNumber(1)).List()
		l.Append(protoreflect.ValueOfString("items.sku"))
		l.Append(protoreflect.ValueOfString("total_cents"))
		return
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if rng.Intn(3) == 0 || depth > 2 && fd.Message() != nil {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for j := rng.Intn(4); j > 0; j-- {
				k := randScalar(rng, fd.MapKey()).MapKey()
				if fd.MapValue().Message() != nil {
					v := mp.NewValue()
					randFill(rng, v.Message(), files, depth+1)
					mp.Set(k, v)
				} else {
					mp.Set(k, randScalar(rng, fd.MapValue()))
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := rng.Intn(4); j > 0; j-- {
				if fd.Message() != nil {
					v := l.NewElement()
					randFill(rng, v.Message(), files, depth+1)
					l.Append(v)
				} else {
					l.Append(randScalar(rng, fd))
				}
			}
		case fd.Message() != nil:
			randFill(rng, m.Mutable(fd).Message(), files, depth+1)
		default:
			m.Set(fd, randScalar(rng, fd))
		}
	}
}

// randScalar returns a random value of a scalar field.
func randScalar(rng *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	big := rng.Uint64() >> uint(rng.Intn(64))
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(rng.Intn(2) == 0)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(rng.Intn(4))) // 3 is not a value of Status
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(big))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(big))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(big))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(big)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(20)-10))))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(200)-100)))
	case protoreflect.StringKind:
		texts := []string{"", "plain", "héllo ✓", "quote\" \\ '", "line\nbreak"}
		return protoreflect.ValueOfString(texts[rng.Intn(len(texts))])
	case protoreflect.BytesKind:
		b := make([]byte, rng.Intn(10))
		rng.Read(b)
		return protoreflect.ValueOfBytes(b)
	}
	panic(fd.Kind())
}

// TestDecodeProtobufSchemaVsProtoc: random Orders, rendered by recfs from
// the .proto source and from protoc's descriptor set, read back as
// protojson, equal the message protoc --decode prints and the message
// written.
func TestDecodeProtobufSchemaVsProtoc(t *testing.T) {
	set, files := shopFiles(t)
	order, err := files.FindDescriptorByName("shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	md := order.(protoreflect.MessageDescriptor)
	types := dynamicpb.NewTypes(files)
	open := func(p string) (io.ReadCloser, error) { return os.Open(p) }
	var decs []decode.Decoder
	for _, protos := range [][]string{{filepath.Join(shopDir, "shop.proto")}, {set}} {
		f, err := pbdecode.Prepare(&decode.Params{Arg: "shop.Order", Proto: protos, Open: open})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := f(decode.Env{})
		decs = append(decs, d)
	}
	checked := 0
	for _, seed := range testSeeds(t, 2) {
		rng := rand.New(rand.NewSource(seed))
		for i := 0; i < 40; i++ {
			m := dynamicpb.NewMessage(md)
			randFill(rng, m, files, 0)
			rec, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			text, ok := protoc(t, rec, "--proto_path="+shopDir, "--decode=shop.Order", "shop.proto")
			if !ok {
				t.Fatalf("protoc --decode: %s", text)
			}
			ref := dynamicpb.NewMessage(md)
			if err := (prototext.UnmarshalOptions{Resolver: types}).Unmarshal([]byte(text), ref); err != nil {
				t.Fatalf("protoc's text: %v\n%s", err, text)
			}
			for j, d := range decs {
				w := decode.NewWriter(nil, decode.Output{}, 0)
				if err := d.Decode(w, &decode.Record{Payload: rec}); err != nil {
					t.Fatalf("seed %d order %d: %v\n%s", seed, i, err, w.B)
				}
				got := dynamicpb.NewMessage(md)
				if err := (protojson.UnmarshalOptions{Resolver: types}).Unmarshal(w.B, got); err != nil {
					t.Fatalf("seed %d order %d: recfs's JSON: %v\n%s", seed, i, err, w.B)
				}
				if !proto.Equal(got, ref) || !proto.Equal(got, m) {
					t.Fatalf("seed %d order %d (schema %d):\nrecfs:\n%s\nprotoc --decode:\n%s", seed, i, j, w.B, text)
				}
			}
			checked++
		}
	}
	t.Logf("%d random orders agree with protoc --decode", checked)
}
