package pbdecode

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/recfs/recfs/codec/decode"
)

// wellKnownFunc renders a well-known type as protojson does; false (with
// nothing appended) when the bytes do not fit its special form, which then
// renders as an ordinary message.
type wellKnownFunc func(r *renderer, dst []byte, md protoreflect.MessageDescriptor, m src, depth int) ([]byte, bool)

// wellKnown returns the types protojson renders in a form of their own,
// built on first use (its renderers reach back to it, so it cannot be a
// sync.OnceValue variable).
func wellKnown() map[protoreflect.FullName]wellKnownFunc {
	wellKnownOnce.Do(buildWellKnown)
	return wellKnownTable
}

var (
	wellKnownOnce  sync.Once
	wellKnownTable map[protoreflect.FullName]wellKnownFunc
)

func buildWellKnown() {
	wellKnown := map[protoreflect.FullName]wellKnownFunc{
		"google.protobuf.Timestamp": timestamp,
		"google.protobuf.Duration":  duration,
		"google.protobuf.Empty":     empty,
		"google.protobuf.Struct":    structValue,
		"google.protobuf.ListValue": listValue,
		"google.protobuf.Value":     value,
		"google.protobuf.FieldMask": fieldMask,
		"google.protobuf.Any":       anyValue,
	}
	for _, w := range []string{"Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes"} {
		wellKnown[protoreflect.FullName("google.protobuf."+w+"Value")] = wrapper
	}
	wellKnownTable = wellKnown
}

// fieldsOf reads the last value of each of the fields of m numbered 1 to
// len(want) whose wire types want gives; false when m holds another field
// or a malformed one.
func fieldsOf(m src, want ...protowire.Type) ([]rawField, []bool, bool) {
	vals := make([]rawField, len(want))
	has := make([]bool, len(want))
	ok := true
	bad := m.each(func(f *rawField) bool {
		i := int(f.num) - 1
		if i < 0 || i >= len(want) || f.typ != want[i] {
			ok = false
			return false
		}
		vals[i], has[i] = *f, true
		return true
	})
	return vals, has, ok && bad < 0
}

// Limits of Timestamp and Duration, as protojson checks them.
const (
	minTimestamp = -62135596800 // 0001-01-01T00:00:00Z
	maxTimestamp = 253402300799 // 9999-12-31T23:59:59Z
	maxDuration  = 315576000000
)

func timestamp(_ *renderer, dst []byte, _ protoreflect.MessageDescriptor, m src, _ int) ([]byte, bool) {
	v, _, ok := fieldsOf(m, protowire.VarintType, protowire.VarintType)
	sec, nanos := int64(v[0].v), int64(int32(v[1].v))
	if !ok || sec < minTimestamp || sec > maxTimestamp || nanos < 0 || nanos >= 1e9 {
		return dst, false
	}
	t := time.Unix(sec, nanos).UTC()
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	dst = appendNanos(dst, nanos)
	return append(dst, `Z"`...), true
}

func duration(_ *renderer, dst []byte, _ protoreflect.MessageDescriptor, m src, _ int) ([]byte, bool) {
	v, _, ok := fieldsOf(m, protowire.VarintType, protowire.VarintType)
	sec, nanos := int64(v[0].v), int64(int32(v[1].v))
	if !ok || sec < -maxDuration || sec > maxDuration || nanos <= -1e9 || nanos >= 1e9 || sec > 0 && nanos < 0 || sec < 0 && nanos > 0 {
		return dst, false
	}
	dst = append(dst, '"')
	if sec < 0 || nanos < 0 {
		dst = append(dst, '-')
		sec, nanos = -sec, -nanos
	}
	dst = strconv.AppendInt(dst, sec, 10)
	dst = appendNanos(dst, nanos)
	return append(dst, `s"`...), true
}

// appendNanos appends a fraction of a second as protojson does: none, or
// 3, 6 or 9 digits.
func appendNanos(dst []byte, nanos int64) []byte {
	if nanos == 0 {
		return dst
	}
	s := strconv.FormatInt(nanos+1e9, 10)[1:]
	switch {
	case strings.HasSuffix(s, "000000"):
		s = s[:3]
	case strings.HasSuffix(s, "000"):
		s = s[:6]
	}
	return append(append(dst, '.'), s...)
}

func empty(_ *renderer, dst []byte, _ protoreflect.MessageDescriptor, m src, _ int) ([]byte, bool) {
	if _, _, ok := fieldsOf(m); !ok {
		return dst, false
	}
	return append(dst, "{}"...), true
}

func wrapper(r *renderer, dst []byte, md protoreflect.MessageDescriptor, m src, _ int) ([]byte, bool) {
	fd := md.Fields().ByNumber(1)
	v, has, ok := fieldsOf(m, kindWire(fd.Kind()))
	if !ok {
		return dst, false
	}
	if !has[0] {
		v[0] = rawField{typ: kindWire(fd.Kind())}
	}
	return r.scalar(dst, fd, &v[0]), true
}

func structValue(r *renderer, dst []byte, md protoreflect.MessageDescriptor, m src, depth int) ([]byte, bool) {
	if _, _, ok := fieldsOf(m, protowire.BytesType); !ok {
		return dst, false
	}
	return r.mapValue(dst, md.Fields().ByNumber(1), m, depth), true
}

func listValue(r *renderer, dst []byte, md protoreflect.MessageDescriptor, m src, depth int) ([]byte, bool) {
	if _, _, ok := fieldsOf(m, protowire.BytesType); !ok {
		return dst, false
	}
	return r.list(dst, md.Fields().ByNumber(1), m, depth), true
}

// value renders a google.protobuf.Value: the member of its kind set last.
func value(r *renderer, dst []byte, md protoreflect.MessageDescriptor, m src, depth int) ([]byte, bool) {
	v, has, ok := fieldsOf(m, protowire.VarintType, protowire.Fixed64Type, protowire.BytesType, protowire.VarintType, protowire.BytesType, protowire.BytesType)
	if !ok {
		return dst, false
	}
	last := -1
	m.each(func(f *rawField) bool {
		last = int(f.num) - 1
		return true
	})
	if last < 0 || !has[last] {
		return dst, false // no kind: protojson refuses it
	}
	fd := md.Fields().ByNumber(protowire.Number(last + 1))
	if fd.Kind() == protoreflect.MessageKind {
		return r.message(dst, fd.Message(), src{b: v[last].b}, depth+1), true
	}
	return r.scalar(dst, fd, &v[last]), true
}

func fieldMask(_ *renderer, dst []byte, _ protoreflect.MessageDescriptor, m src, _ int) ([]byte, bool) {
	var paths []string
	ok := true
	bad := m.each(func(f *rawField) bool {
		if f.num != 1 || f.typ != protowire.BytesType || strings.ContainsAny(string(f.b), ",") {
			ok = false
			return false
		}
		paths = append(paths, lowerCamel(string(f.b)))
		return true
	})
	if !ok || bad >= 0 {
		return dst, false
	}
	return decode.AppendJSONString(dst, strings.Join(paths, ",")), true
}

// lowerCamel turns a snake_case path into lowerCamelCase, as protojson
// writes FieldMask paths.
func lowerCamel(s string) string {
	var b strings.Builder
	up := false
	for _, c := range s {
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteRune(c - 'a' + 'A')
			up = false
		default:
			b.WriteRune(c)
			up = false
		}
	}
	return b.String()
}

// anyValue renders a google.protobuf.Any: "@type", then the members of the
// message it holds when the schema has its type (a well-known type's form
// as "value"), else its bytes as "#value".
func anyValue(r *renderer, dst []byte, _ protoreflect.MessageDescriptor, m src, depth int) ([]byte, bool) {
	v, has, ok := fieldsOf(m, protowire.BytesType, protowire.BytesType)
	if !ok || !has[0] {
		return dst, false
	}
	url := string(v[0].b)
	dst = append(dst, '{')
	dst = appendKey(dst, "@type", r.s)
	dst = decode.AppendJSONBytes(dst, v[0].b)
	name := url[strings.LastIndexByte(url, '/')+1:]
	var md protoreflect.MessageDescriptor
	if d, err := r.schema.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
		md, _ = d.(protoreflect.MessageDescriptor)
	}
	switch {
	case md == nil:
		dst = append(dst, r.s.comma...)
		dst = appendKey(dst, "#value", r.s)
		dst = decode.AppendJSONBase64(dst, v[1].b)
	case wellKnown()[md.FullName()] != nil:
		dst = append(dst, r.s.comma...)
		dst = appendKey(dst, "value", r.s)
		dst = r.message(dst, md, src{b: v[1].b}, depth+1)
	default:
		dst, _ = r.members(dst, md, src{b: v[1].b}, depth+1, false)
	}
	return append(dst, '}'), true
}
