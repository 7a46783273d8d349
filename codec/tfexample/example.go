// Package tfexample renders TensorFlow's tf.train.Example and
// tf.train.SequenceExample records (the usual payload of TFRecord files)
// as one JSON object each, without TensorFlow: it reads the protobuf wire
// format directly, so that a record renders without building a message
// and hostile records cost no more than their size.
//
// An Example renders as
//
//	{"features": {"label": [7], "name": ["horse"], "weight": [0.5]}}
//
// and a SequenceExample (a record that holds feature lists) as
//
//	{"context": {"id": ["clip-1"]}, "feature_lists": {"frame": [[1, 2], [3]]}}
//
// Feature names are sorted, so equal records render equally. int64 and
// float values are JSON numbers (a float's shortest decimal form; NaN and
// the infinities as the strings "NaN", "Infinity" and "-Infinity", as
// protojson writes them); bytes are a JSON string when they are valid
// UTF-8, else the marked form {"base64":"..."}. In text output the
// separators are ": " and ", " so that grep '"label": \[7\]' finds the
// records with that label; JSON Lines (--json) are compact and start with
// "n", the record number. The proto3 rules apply: a map key given twice
// keeps its last value, a oneof its last member, message fields given
// twice merge; a feature name must be UTF-8 (a proto3 string). A record
// with a field the messages do not define, a field
// of the wrong wire type or malformed bytes is not an Example: it renders
// as nothing and the decoder reports a misfit, so that no byte is
// dropped silently (--decode protobuf shows such records).
package tfexample

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/decode"
)

// Decoder renders Example and SequenceExample records.
var Decoder decode.Decoder = decode.Func(Decode)

// Decode writes rec as an Example or SequenceExample object.
func Decode(w *decode.Writer, rec *decode.Record) error {
	start := len(w.B)
	w.Begin()
	var err error
	if w.JSON() {
		w.B, err = appendRecord(append(w.B, ','), rec.Payload, compact)
	} else {
		w.B, err = appendRecord(append(w.B, '{'), rec.Payload, spaced)
		w.B = append(w.B, '}')
	}
	if err != nil {
		w.B = w.B[:start]
		return err
	}
	w.End()
	return nil
}

// AppendJSON appends the text rendering of record rec (an object with its
// braces) to dst; nothing and a misfit error when rec is neither an
// Example nor a SequenceExample.
func AppendJSON(dst, rec []byte) ([]byte, error) {
	start := len(dst)
	out, err := appendRecord(append(dst, '{'), rec, spaced)
	if err != nil {
		return dst[:start], err
	}
	return append(out, '}'), nil
}

// style holds the separators of an output.
type style struct{ colon, comma string }

var (
	spaced  = style{": ", ", "}
	compact = style{":", ","}
)

// Field numbers and wire types of the messages (tensorflow/core/example).
const (
	fExampleFeatures      = 1 // Example.features; SequenceExample.context
	fSequenceFeatureLists = 2 // SequenceExample.feature_lists
	fMapEntries           = 1 // Features.feature, FeatureLists.feature_list, FeatureList.feature
	fMapKey               = 1
	fMapValue             = 2
	fBytesList            = 1
	fFloatList            = 2
	fInt64List            = 3
	fListValue            = 1
)

// appendRecord appends the members of the record's object, without its
// braces.
func appendRecord(dst, rec []byte, s style) ([]byte, error) {
	var features, lists [][]byte
	sequence := false
	err := eachField(rec, func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
		switch {
		case num == fExampleFeatures && typ == protowire.BytesType:
			features = append(features, v)
		case num == fSequenceFeatureLists && typ == protowire.BytesType:
			lists, sequence = append(lists, v), true
		default:
			return misfit(at, "field %d (wire type %d) is in neither Example nor SequenceExample", num, typ)
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	if !sequence {
		dst = appendKey(dst, "features", s)
		return appendFeatures(dst, features, s)
	}
	dst = appendKey(dst, "context", s)
	if dst, err = appendFeatures(dst, features, s); err != nil {
		return dst, err
	}
	dst = append(dst, s.comma...)
	dst = appendKey(dst, "feature_lists", s)
	return appendFeatureLists(dst, lists, s)
}

// appendKey appends "key" and the colon.
func appendKey(dst []byte, key string, s style) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, '"')
	return append(dst, s.colon...)
}

// entry is one map entry: a feature's name and its value's bytes.
type entry struct {
	name, value []byte
}

// mapEntries gathers the entries of the map field 1 of every message in
// msgs (repeated messages merge), sorted by name, the last of equal names
// kept.
func mapEntries(msgs [][]byte, what string) ([]entry, error) {
	var es []entry
	for _, m := range msgs {
		err := eachField(m, func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
			if num != fMapEntries || typ != protowire.BytesType {
				return misfit(at, "field %d (wire type %d) in %s", num, typ, what)
			}
			var e entry
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
				switch {
				case num == fMapKey && typ == protowire.BytesType:
					if !utf8.Valid(v) {
						return misfit(at, "a %s key that is not UTF-8", what)
					}
					e.name = v
				case num == fMapValue && typ == protowire.BytesType:
					e.value = v
				default:
					return misfit(at, "field %d (wire type %d) in a %s entry", num, typ, what)
				}
				return nil
			})
			es = append(es, e)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return bytes.Compare(a.name, b.name) })
	out := es[:0]
	for i, e := range es {
		if i+1 < len(es) && bytes.Equal(es[i+1].name, e.name) {
			continue // a later entry of the same name wins
		}
		out = append(out, e)
	}
	return out, nil
}

// appendFeatures appends a Features map as an object.
func appendFeatures(dst []byte, msgs [][]byte, s style) ([]byte, error) {
	return appendMap(dst, msgs, "Features", s, func(dst, value []byte) ([]byte, error) {
		return appendFeature(dst, [][]byte{value}, s)
	})
}

// appendFeatureLists appends a FeatureLists map: per name, a list of
// value lists.
func appendFeatureLists(dst []byte, msgs [][]byte, s style) ([]byte, error) {
	return appendMap(dst, msgs, "FeatureLists", s, func(dst, value []byte) ([]byte, error) {
		dst = append(dst, '[')
		n := 0
		err := eachField(value, func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
			if num != fMapEntries || typ != protowire.BytesType {
				return misfit(at, "field %d (wire type %d) in a FeatureList", num, typ)
			}
			if n > 0 {
				dst = append(dst, s.comma...)
			}
			n++
			var err error
			dst, err = appendFeature(dst, [][]byte{v}, s)
			return err
		})
		return append(dst, ']'), err
	})
}

// appendMap appends the map of messages msgs (called what) as an object
// of its entries sorted by name, each value appended by value.
func appendMap(dst []byte, msgs [][]byte, what string, s style, value func(dst, v []byte) ([]byte, error)) ([]byte, error) {
	es, err := mapEntries(msgs, what)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '{')
	for i, e := range es {
		if i > 0 {
			dst = append(dst, s.comma...)
		}
		dst = decode.AppendJSONBytes(dst, e.name) // UTF-8: a string
		dst = append(dst, s.colon...)
		if dst, err = value(dst, e.value); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFeature appends a Feature (the concatenation of its messages) as
// the list of its values: the oneof member set last; [] when none is.
func appendFeature(dst []byte, msgs [][]byte, s style) ([]byte, error) {
	kind, parts, err := featureLists(msgs)
	if err != nil {
		return dst, err
	}
	l := valueList{dst: append(dst, '['), comma: s.comma, kind: kind}
	for _, p := range parts {
		if err := eachField(p, l.add); err != nil {
			return l.dst, err
		}
	}
	return append(l.dst, ']'), nil
}

// featureLists returns the oneof member a Feature sets last (bytes, float
// or int64 list) and the messages of that member.
func featureLists(msgs [][]byte) (protowire.Number, [][]byte, error) {
	var kind protowire.Number
	var parts [][]byte
	for _, m := range msgs {
		err := eachField(m, func(num protowire.Number, typ protowire.Type, v []byte, at int) error {
			if num < fBytesList || num > fInt64List || typ != protowire.BytesType {
				return misfit(at, "field %d (wire type %d) in a Feature", num, typ)
			}
			if num != kind {
				kind, parts = num, parts[:0] // another oneof member replaces the last
			}
			parts = append(parts, v)
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
	}
	return kind, parts, nil
}

// valueList appends the values of a Feature's list, separated by comma.
type valueList struct {
	dst   []byte
	comma string
	kind  protowire.Number // fBytesList, fFloatList or fInt64List
	n     int
}

// sep appends the separator before every value but the first.
func (l *valueList) sep() {
	if l.n > 0 {
		l.dst = append(l.dst, l.comma...)
	}
	l.n++
}

// add appends the values of one field of a value list (an eachField
// callback): one value, or a packed run of them.
func (l *valueList) add(num protowire.Number, typ protowire.Type, v []byte, at int) error {
	if num != fListValue {
		return misfit(at, "field %d in a value list", num)
	}
	switch {
	case l.kind == fBytesList && typ == protowire.BytesType:
		l.sep()
		l.dst = decode.AppendJSONBytes(l.dst, v)
	case l.kind == fFloatList && typ == protowire.Fixed32Type:
		l.sep()
		l.dst = appendFloat(l.dst, uint32(v[0])|uint32(v[1])<<8|uint32(v[2])<<16|uint32(v[3])<<24)
	case l.kind == fFloatList && typ == protowire.BytesType:
		if len(v)%4 != 0 {
			return misfit(at, "packed floats of %d bytes", len(v))
		}
		for i := 0; i < len(v); i += 4 {
			l.sep()
			l.dst = appendFloat(l.dst, uint32(v[i])|uint32(v[i+1])<<8|uint32(v[i+2])<<16|uint32(v[i+3])<<24)
		}
	case l.kind == fInt64List && typ == protowire.VarintType:
		x, _ := protowire.ConsumeVarint(v)
		l.sep()
		l.dst = strconv.AppendInt(l.dst, int64(x), 10)
	case l.kind == fInt64List && typ == protowire.BytesType:
		for i := 0; i < len(v); {
			x, k := protowire.ConsumeVarint(v[i:])
			if k < 0 {
				return misfit(at, "bad varint in packed int64s")
			}
			l.sep()
			l.dst = strconv.AppendInt(l.dst, int64(x), 10)
			i += k
		}
	default:
		return misfit(at, "wire type %d in a value list", typ)
	}
	return nil
}

// appendFloat appends a float32 as protojson does: its shortest decimal
// form, NaN and the infinities as strings.
func appendFloat(dst []byte, bits uint32) []byte {
	f := math.Float32frombits(bits)
	switch {
	case f != f:
		return append(dst, `"NaN"`...)
	case math.IsInf(float64(f), 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(float64(f), -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, float64(f), 'g', -1, 32)
}

// eachField calls fn with every field of message b: its number, wire type,
// value bytes (a varint's or fixed value's own bytes, a length-delimited
// field's contents) and offset. Groups and malformed fields are misfits.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, at int) error) error {
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return misfit(off, "bad tag: %v", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return misfit(off, "field %d: %v", num, protowire.ParseError(m))
		}
		v := b[off+n : off+n+m]
		if typ == protowire.BytesType {
			_, k := protowire.ConsumeVarint(v)
			v = v[k:]
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return misfit(off, "field %d is a group", num)
		}
		if err := fn(num, typ, v, off); err != nil {
			return err
		}
		off += n + m
	}
	return nil
}

// misfit is the error of a record that is no Example.
func misfit(at int, format string, args ...any) error {
	return decode.Misfit(at, "not an Example: "+format, args...)
}

// Detect reports whether recs, the first records of a source, are
// Examples or SequenceExamples: each renders, and one has a feature.
func Detect(recs [][]byte) bool {
	some := false
	var buf []byte
	for _, r := range recs {
		out, err := AppendJSON(buf[:0], r)
		if err != nil {
			return false
		}
		buf = out
		some = some || len(out) > len(`{"features": {}}`)
	}
	return some
}
