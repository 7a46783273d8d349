package pbdecode

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/internal/pbwire"
)

// Depths of the schemaless decoder, protoc --decode_raw's: RawBudget
// length-delimited fields nest as messages (deeper ones show as strings),
// and groups nest up to groupLimit levels in a record, and up to the
// budget left inside a length-delimited field taken for a message.
const (
	RawBudget  = 10
	groupLimit = 100
)

// rawField is one field of a message read without its schema.
type rawField struct {
	num protowire.Number
	typ protowire.Type
	v   uint64 // varint, fixed32 and fixed64 values
	b   []byte // length-delimited contents; a group's fields
}

// eachRaw calls fn with every field of message b, in order, groups read
// while budget lasts. It stops at the first malformed field and returns
// where it is; ok reports that every byte was a field. Nothing is kept:
// a message of ten million fields costs no memory.
func eachRaw(b []byte, budget int, fn func(f *rawField)) (at int, ok bool) {
	var f rawField // one for the walk: fn must not keep it
	for off := 0; off < len(b); {
		var n int
		f, n = parseRawField(b[off:], budget)
		if n < 0 {
			return off, false
		}
		if fn != nil {
			fn(&f)
		}
		off += n
	}
	return len(b), true
}

// parseRawField reads one field; n < 0 when it is malformed (an end-group
// tag outside its group is).
func parseRawField(b []byte, budget int) (rawField, int) {
	num, typ, n := consumeTag(b)
	if n < 0 {
		return rawField{}, -1
	}
	f := rawField{num: num, typ: typ}
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = pbwire.Varint(b[n:])
	case protowire.Fixed32Type, protowire.Fixed64Type:
		f.v, m = pbwire.Scalar(b[n:], typ)
	case protowire.BytesType:
		var size uint64
		size, m = pbwire.Varint(b[n:])
		if m >= 0 && size <= uint64(len(b)-n-m) {
			f.b = b[n+m : n+m+int(size)]
			m += int(size)
		} else {
			m = -1
		}
	case protowire.StartGroupType:
		if budget <= 0 {
			return f, -1
		}
		return parseGroup(f, b, n, budget)
	default:
		return f, -1
	}
	if m < 0 {
		return f, -1
	}
	return f, n + m
}

// consumeTag reads a tag as protoc does: a varint of at most ten bytes
// cut to 32 bits, whose field number must not be 0.
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	v, n := pbwire.Varint(b)
	tag := uint32(v)
	if n < 0 || tag>>3 == 0 {
		return 0, 0, -1
	}
	return protowire.Number(tag >> 3), protowire.Type(tag & 7), n
}

// parseGroup reads the group f, whose start tag ends at b[n], up to its
// end tag; f.b holds the fields between.
func parseGroup(f rawField, b []byte, n, budget int) (rawField, int) {
	for off := n; off < len(b); {
		num, typ, k := consumeTag(b[off:])
		if k < 0 {
			return f, -1
		}
		if typ == protowire.EndGroupType {
			if num != f.num {
				return f, -1
			}
			f.b = b[n:off]
			return f, off + k
		}
		_, m := parseRawField(b[off:], budget-1)
		if m < 0 {
			return f, -1
		}
		off += m
	}
	return f, -1
}

// isMessage reports whether protoc would take b for a message: not empty,
// within the budget, and every byte a field.
func isMessage(b []byte, budget int) bool {
	if len(b) == 0 || budget <= 0 {
		return false
	}
	_, ok := eachRaw(b, budget, nil)
	return ok
}

// writeRaw writes message rec without its schema: in text as protoc
// --decode_raw does (one line a field, "N: value", nested messages as
// "N {" ... "}" indented by two spaces), in JSON as
// {"n":N,"fields":[...]}. A record that is not a message shows its
// fields up to the fault, then an error line with the rest of its bytes,
// and is a misfit.
func writeRaw(w *decode.Writer, rec []byte) error {
	at, ok := eachRaw(rec, groupLimit, nil)
	fields := rec[:at]
	if w.JSON() {
		w.Begin()
		w.Key("fields")
		w.B = appendRawJSON(w.B, fields, RawBudget)
		if !ok {
			w.Key("error")
			w.B = decode.AppendJSONString(w.B, "malformed field at byte "+strconv.Itoa(at))
			w.Key("rest")
			w.B = decode.AppendJSONBase64(w.B, rec[at:])
		}
		w.End()
	} else {
		writeRawText(w, fields, 0, RawBudget)
		if !ok {
			w.Begin()
			w.B = append(w.B, "error: malformed field at byte "...)
			w.B = strconv.AppendInt(w.B, int64(at), 10)
			w.B = append(w.B, ", the rest raw: \""...)
			w.B = appendCEscaped(w.B, rec[at:])
			w.B = append(w.B, '"')
			w.End()
		}
	}
	if !ok {
		return decode.Misfit(at, "not a protobuf message: malformed field")
	}
	return nil
}

// writeRawText writes the fields of msg (well formed) as protoc
// --decode_raw does, at indent depth, with budget levels of
// length-delimited fields left to take for messages.
func writeRawText(w *decode.Writer, msg []byte, depth, budget int) {
	eachRaw(msg, groupLimit, func(f *rawField) {
		w.Begin()
		for range depth {
			w.B = append(w.B, "  "...)
		}
		w.B = strconv.AppendUint(w.B, uint64(f.num), 10)
		switch f.typ {
		case protowire.VarintType:
			w.B = append(w.B, ": "...)
			w.B = strconv.AppendUint(w.B, f.v, 10)
		case protowire.Fixed32Type:
			w.B = append(w.B, ": 0x"...)
			w.B = appendHexPadded(w.B, f.v, 8)
		case protowire.Fixed64Type:
			w.B = append(w.B, ": 0x"...)
			w.B = appendHexPadded(w.B, f.v, 16)
		case protowire.StartGroupType:
			writeRawNested(w, f.b, depth, budget)
		case protowire.BytesType:
			if isMessage(f.b, budget) {
				writeRawNested(w, f.b, depth, budget)
			} else {
				w.B = append(w.B, ": \""...)
				w.B = appendCEscaped(w.B, f.b)
				w.B = append(w.B, '"')
			}
		}
		w.End()
	})
}

// writeRawNested ends the line of a field with " {", writes the fields of
// msg one level deeper, and begins the line of the closing "}".
func writeRawNested(w *decode.Writer, msg []byte, depth, budget int) {
	w.B = append(w.B, " {"...)
	w.End()
	writeRawText(w, msg, depth+1, budget-1)
	w.Begin()
	for range depth {
		w.B = append(w.B, "  "...)
	}
	w.B = append(w.B, '}')
}

// appendRawJSON appends fields as a JSON array of {"field":N,"TYPE":V},
// TYPE being varint, fixed32, fixed64 (numbers), bytes (a string or the
// marked base64 form), message or group (arrays of fields).
func appendRawJSON(dst []byte, msg []byte, budget int) []byte {
	dst = append(dst, '[')
	first := true
	eachRaw(msg, groupLimit, func(f *rawField) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"field":`...)
		dst = strconv.AppendUint(dst, uint64(f.num), 10)
		switch f.typ {
		case protowire.VarintType:
			dst = append(dst, `,"varint":`...)
			dst = strconv.AppendUint(dst, f.v, 10)
		case protowire.Fixed32Type:
			dst = append(dst, `,"fixed32":`...)
			dst = strconv.AppendUint(dst, f.v, 10)
		case protowire.Fixed64Type:
			dst = append(dst, `,"fixed64":`...)
			dst = strconv.AppendUint(dst, f.v, 10)
		case protowire.StartGroupType:
			dst = append(dst, `,"group":`...)
			dst = appendRawJSON(dst, f.b, budget-1)
		case protowire.BytesType:
			if isMessage(f.b, budget) {
				dst = append(dst, `,"message":`...)
				dst = appendRawJSON(dst, f.b, budget-1)
			} else {
				dst = append(dst, `,"bytes":`...)
				dst = decode.AppendJSONBytes(dst, f.b)
			}
		}
		dst = append(dst, '}')
	})
	return append(dst, ']')
}

// appendHexPadded appends v in lowercase hex, zero-padded to width digits.
func appendHexPadded(dst []byte, v uint64, width int) []byte {
	var tmp [16]byte
	h := strconv.AppendUint(tmp[:0], v, 16)
	for i := len(h); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, h...)
}

// appendCEscaped escapes b as protoc's CEscape does (\n, \r, \t, \", \',
// \\, other bytes below 0x20 or from 0x7f as three octal digits), except
// that printable UTF-8 characters stay themselves, for grep.
func appendCEscaped(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '"', '\'', '\\':
			dst = append(dst, '\\', c)
		default:
			if c >= utf8.RuneSelf {
				if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError && unicode.IsPrint(r) {
					dst = append(dst, b[i:i+n]...)
					i += n
					continue
				}
			}
			if c < 0x20 || c >= 0x7f {
				dst = append(dst, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return dst
}
