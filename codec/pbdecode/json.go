package pbdecode

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/internal/pbwire"
)

// Bounds of a rendering: nesting of messages (protoc's default recursion
// limit), and map entries or repeated message values gathered in memory
// for one field.
const (
	maxDepth = 100
	maxItems = 1 << 20
)

// style holds the separators of an output.
type style struct{ colon, comma string }

var (
	spaced  = style{": ", ", "}
	compact = style{":", ","}
)

// src is the bytes of one message: b, or, with filter, the concatenation
// of the contents of the length-delimited fields num of b (how a message
// field given several times merges).
type src struct {
	b      []byte
	filter bool
	num    protowire.Number
}

// each calls fn with every field of the message, in order; it stops at
// the first malformed one and returns its offset in the bytes it came
// from (-1 when all are fields). Groups of the schema come whole.
func (s src) each(fn func(f *rawField) bool) int {
	if !s.filter {
		return eachField(s.b, fn)
	}
	bad := -1
	eachRaw(s.b, 0, func(f *rawField) {
		if bad >= 0 || f.num != s.num || f.typ != protowire.BytesType {
			return
		}
		if at := eachField(f.b, fn); at >= 0 {
			bad = at
		}
	})
	return bad
}

// eachField walks the fields of b without looking into groups' contents
// more than to find their ends.
func eachField(b []byte, fn func(f *rawField) bool) int {
	var f rawField // one for the walk: fn must not keep it
	for off := 0; off < len(b); {
		var n int
		f, n = parseRawField(b[off:], maxDepth)
		if n < 0 {
			return off
		}
		if !fn(&f) {
			return -1
		}
		off += n
	}
	return -1
}

// stat is what the first pass learns of one field of a message.
type stat struct {
	count int      // occurrences of the right wire type
	last  rawField // the last of them
	pos   int      // its position among the message's fields
}

// renderer renders messages of a schema as protojson.
type renderer struct {
	s      style
	schema Resolver
	err    error // the first fault: the rendering ends there
	copies int   // bytes it may still copy to merge messages
}

// fault records the first fault.
func (r *renderer) fault(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// message appends the object of message md read from m.
func (r *renderer) message(dst []byte, md protoreflect.MessageDescriptor, m src, depth int) []byte {
	if depth > maxDepth {
		r.fault("messages nested deeper than %d", maxDepth)
		return append(dst, "{}"...)
	}
	if w, ok := wellKnown()[md.FullName()]; ok {
		if out, ok := w(r, dst, md, m, depth); ok {
			return out
		}
	}
	dst = append(dst, '{')
	dst, _ = r.members(dst, md, m, depth, true)
	return append(dst, '}')
}

// members appends the members of message md read from m, without braces;
// first says no member was written before them. It reports whether it
// wrote any.
func (r *renderer) members(dst []byte, md protoreflect.MessageDescriptor, m src, depth int, first bool) ([]byte, bool) {
	fields := md.Fields()
	stats := make([]stat, fields.Len())
	unknown, pos := false, 0
	bad := m.each(func(f *rawField) bool {
		pos++
		fd := fields.ByNumber(f.num)
		if fd == nil || !wireFits(fd, f.typ) {
			unknown = true
			return true
		}
		st := &stats[fd.Index()]
		st.count++
		st.last, st.pos = *f, pos
		return true
	})
	sep := func() {
		if !first {
			dst = append(dst, r.s.comma...)
		}
		first = false
	}
	for i := 0; i < fields.Len() && r.err == nil; i++ {
		st := &stats[i]
		fd := fields.Get(i)
		if st.count == 0 || !oneofWinner(fd, stats, fields) {
			continue
		}
		sep()
		dst = appendKey(dst, fd.JSONName(), r.s)
		switch {
		case fd.IsMap():
			dst = r.mapValue(dst, fd, m, depth)
		case fd.IsList():
			dst = r.list(dst, fd, m, depth)
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			sub := src{b: st.last.b}
			if st.count > 1 {
				sub = src{b: m.b, filter: true, num: fd.Number()}
				if m.filter {
					sub = src{b: r.concat(m, fd.Number())}
				}
			}
			if fd.Kind() == protoreflect.GroupKind {
				sub = src{b: st.last.b} // groups do not merge here: the last wins
			}
			dst = r.message(dst, fd.Message(), sub, depth+1)
		default:
			dst = r.scalar(dst, fd, &st.last)
		}
	}
	if unknown && r.err == nil {
		sep()
		dst = appendKey(dst, "#unknown", r.s)
		dst = r.unknown(dst, md, m)
	}
	if bad >= 0 && r.err == nil {
		r.fault("malformed field at byte %d", bad)
		sep()
		dst = appendKey(dst, "#error", r.s)
		dst = decode.AppendJSONString(dst, r.err.Error())
		if !m.filter {
			dst = append(dst, r.s.comma...)
			dst = appendKey(dst, "#rest", r.s)
			dst = decode.AppendJSONBase64(dst, m.b[bad:])
		}
	}
	return dst, !first
}

// concat returns the concatenation of the contents of fields num of the
// merged message m (a message field given several times inside a message
// that was itself given several times), within the copy budget.
func (r *renderer) concat(m src, num protowire.Number) []byte {
	var out []byte
	m.each(func(f *rawField) bool {
		if f.num == num && f.typ == protowire.BytesType {
			if r.copies -= len(f.b); r.copies < 0 {
				r.fault("messages merged past the copy budget")
				return false
			}
			out = append(out, f.b...)
		}
		return true
	})
	return out
}

// oneofWinner reports whether fd, present, is shown: outside a oneof
// always; inside one, when it came last of its members.
func oneofWinner(fd protoreflect.FieldDescriptor, stats []stat, fields protoreflect.FieldDescriptors) bool {
	od := fd.ContainingOneof()
	if od == nil || od.IsSynthetic() {
		return true
	}
	mine := stats[fd.Index()].pos
	for i := 0; i < od.Fields().Len(); i++ {
		o := od.Fields().Get(i)
		if st := stats[o.Index()]; st.count > 0 && st.pos > mine {
			return false
		}
	}
	return true
}

// wireFits reports whether wire type typ can carry field fd (packed
// repeated scalars come length-delimited).
func wireFits(fd protoreflect.FieldDescriptor, typ protowire.Type) bool {
	want := kindWire(fd.Kind())
	return typ == want || fd.IsList() && typ == protowire.BytesType && want != protowire.BytesType
}

// kindWire returns the wire type of a kind's values.
func kindWire(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Uint32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.BytesType
}

// list appends the values of the repeated field fd of m as an array.
func (r *renderer) list(dst []byte, fd protoreflect.FieldDescriptor, m src, depth int) []byte {
	dst = append(dst, '[')
	n := 0
	item := func() {
		if n > 0 {
			dst = append(dst, r.s.comma...)
		}
		n++
	}
	m.each(func(f *rawField) bool {
		if f.num != fd.Number() || !wireFits(fd, f.typ) || r.err != nil {
			return r.err == nil
		}
		switch {
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			item()
			dst = r.message(dst, fd.Message(), src{b: f.b}, depth+1)
		case f.typ == protowire.BytesType && kindWire(fd.Kind()) != protowire.BytesType:
			// Packed: values back to back.
			for b := f.b; len(b) > 0; {
				v, k := consumeValue(b, kindWire(fd.Kind()))
				if k < 0 {
					r.fault("field %s: malformed packed values", fd.Name())
					return false
				}
				item()
				dst = r.scalar(dst, fd, &v)
				b = b[k:]
			}
		default:
			item()
			dst = r.scalar(dst, fd, f)
		}
		return true
	})
	return append(dst, ']')
}

// consumeValue reads one value of wire type typ from b.
func consumeValue(b []byte, typ protowire.Type) (rawField, int) {
	v, n := pbwire.Scalar(b, typ)
	return rawField{typ: typ, v: v}, n
}

// mapEntry is one entry of a map field: its key's text (the JSON member
// name) and sort key, and its value field.
type mapEntry struct {
	key   string
	order mapOrder
	value rawField
	has   bool
}

// mapOrder sorts map keys as protojson does: false before true, numbers
// ascending, strings by code point.
type mapOrder struct {
	i int64
	u uint64
	s string
}

// mapValue appends the map field fd of m as an object.
func (r *renderer) mapValue(dst []byte, fd protoreflect.FieldDescriptor, m src, depth int) []byte {
	kd, vd := fd.MapKey(), fd.MapValue()
	var es []mapEntry
	m.each(func(f *rawField) bool {
		if f.num != fd.Number() || f.typ != protowire.BytesType {
			return true
		}
		if len(es) == maxItems {
			r.fault("map %s has more than %d entries", fd.Name(), maxItems)
			return false
		}
		e := mapEntry{}
		var key rawField
		haveKey := false
		bad := eachField(f.b, func(g *rawField) bool {
			switch {
			case g.num == 1 && wireFits(kd, g.typ):
				key, haveKey = *g, true
			case g.num == 2 && wireFits(vd, g.typ):
				e.value, e.has = *g, true
			}
			return true
		})
		if bad >= 0 {
			r.fault("map %s: malformed entry", fd.Name())
			return false
		}
		if !haveKey {
			key = rawField{typ: kindWire(kd.Kind())}
		}
		e.key, e.order = mapKey(kd, &key)
		es = append(es, e)
		return true
	})
	slices.SortStableFunc(es, func(a, b mapEntry) int {
		switch {
		case a.order.i != b.order.i:
			return cmp(a.order.i < b.order.i)
		case a.order.u != b.order.u:
			return cmp(a.order.u < b.order.u)
		}
		return strings.Compare(a.order.s, b.order.s)
	})
	dst = append(dst, '{')
	n := 0
	for i, e := range es {
		if i+1 < len(es) && es[i+1].order == e.order || r.err != nil {
			continue // the last entry of a key wins
		}
		if n > 0 {
			dst = append(dst, r.s.comma...)
		}
		n++
		dst = decode.AppendJSONString(dst, e.key)
		dst = append(dst, r.s.colon...)
		switch {
		case vd.Kind() == protoreflect.MessageKind:
			b := []byte(nil)
			if e.has {
				b = e.value.b
			}
			dst = r.message(dst, vd.Message(), src{b: b}, depth+1)
		case !e.has:
			dst = r.scalar(dst, vd, &rawField{typ: kindWire(vd.Kind())})
		default:
			dst = r.scalar(dst, vd, &e.value)
		}
	}
	return append(dst, '}')
}

func cmp(less bool) int {
	if less {
		return -1
	}
	return 1
}

// mapKey returns the text of a map key and its sort key.
func mapKey(kd protoreflect.FieldDescriptor, f *rawField) (string, mapOrder) {
	switch kd.Kind() {
	case protoreflect.BoolKind:
		if f.v != 0 {
			return "true", mapOrder{i: 1}
		}
		return "false", mapOrder{}
	case protoreflect.StringKind:
		return string(f.b), mapOrder{s: string(f.b)}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.FormatUint(uint64(uint32(f.v)), 10), mapOrder{u: uint64(uint32(f.v))}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(f.v, 10), mapOrder{u: f.v}
	}
	v := signed(kd.Kind(), f.v)
	return strconv.FormatInt(v, 10), mapOrder{i: v}
}

// signed returns the value of a signed integer kind.
func signed(k protoreflect.Kind, v uint64) int64 {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind, protoreflect.EnumKind:
		return int64(int32(v))
	case protoreflect.Sint32Kind:
		return int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))
	case protoreflect.Sint64Kind:
		return protowire.DecodeZigZag(v)
	}
	return int64(v)
}

// scalar appends the value of field f of scalar field fd as protojson
// does: 64-bit integers as strings, floats with NaN and the infinities
// as strings, enums by name, bytes in base64, strings as strings (marked
// base64 when not UTF-8).
func (r *renderer) scalar(dst []byte, fd protoreflect.FieldDescriptor, f *rawField) []byte {
	switch k := fd.Kind(); k {
	case protoreflect.BoolKind:
		return strconv.AppendBool(dst, f.v != 0)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(protoreflect.EnumNumber(int32(f.v))); ev != nil {
			if fd.Enum().FullName() == "google.protobuf.NullValue" {
				return append(dst, "null"...)
			}
			return decode.AppendJSONString(dst, string(ev.Name()))
		}
		return strconv.AppendInt(dst, int64(int32(f.v)), 10)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(dst, signed(k, f.v), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(dst, uint64(uint32(f.v)), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, signed(k, f.v), 10)
		return append(dst, '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, f.v, 10)
		return append(dst, '"')
	case protoreflect.FloatKind:
		return appendFloat(dst, float64(math.Float32frombits(uint32(f.v))), 32)
	case protoreflect.DoubleKind:
		return appendFloat(dst, math.Float64frombits(f.v), 64)
	case protoreflect.StringKind:
		return decode.AppendJSONBytes(dst, f.b)
	case protoreflect.BytesKind:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, f.b)
		return append(dst, '"')
	}
	return append(dst, "null"...)
}

// appendFloat appends a float as protojson does.
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// unknown appends the fields of m that md does not define (or that come
// with another wire type), in order, as the schemaless JSON form does.
func (r *renderer) unknown(dst []byte, md protoreflect.MessageDescriptor, m src) []byte {
	var raw []byte
	m.each(func(f *rawField) bool {
		if fd := md.Fields().ByNumber(f.num); fd != nil && wireFits(fd, f.typ) {
			return true
		}
		raw = appendField(raw, f)
		return true
	})
	return appendRawJSON(dst, raw, RawBudget)
}

// appendField appends field f in wire format.
func appendField(dst []byte, f *rawField) []byte {
	dst = protowire.AppendTag(dst, f.num, f.typ)
	switch f.typ {
	case protowire.VarintType:
		return protowire.AppendVarint(dst, f.v)
	case protowire.Fixed32Type:
		return protowire.AppendFixed32(dst, uint32(f.v))
	case protowire.Fixed64Type:
		return protowire.AppendFixed64(dst, f.v)
	case protowire.StartGroupType:
		dst = append(dst, f.b...)
		return protowire.AppendTag(dst, f.num, protowire.EndGroupType)
	}
	return protowire.AppendBytes(dst, f.b)
}

// appendKey appends "key" and the colon; key must be UTF-8.
func appendKey(dst []byte, key string, s style) []byte {
	dst = decode.AppendJSONString(dst, key)
	return append(dst, s.colon...)
}
