package kafka

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/recfs/recfs/codec/decode"
)

// DecoderOptions configure the decoder of Kafka records (--decode kafka).
type DecoderOptions struct {
	// JSONValues says the values are JSON documents: they are shown
	// compacted, and embedded as JSON (not as strings) in JSON output; a
	// value that is not JSON is a misfit.
	JSONValues bool
	// Values, when set, makes the decoder of each source's values: the
	// value is rendered by it (its lines follow the record's line in
	// text; its objects are the record's "value" array in JSON).
	Values decode.Factory
}

// PrepareDecoder returns the factory of the decoders of Kafka records.
//
// A record renders as one line of tab-separated fields, in text:
//
//	offset=O  time=T  key=K  header.NAME=V ...  value=V
//
// (offset left out with --number, which labels the line with it), T the
// timestamp in RFC 3339 with milliseconds, UTC. Keys, header names and
// values and values are escaped losslessly and greppably: printable UTF-8,
// spaces included, stays as it is; a backslash is \\, a tab \t, a newline
// \n, a carriage return \r, every other control byte and every byte of
// invalid UTF-8 \xHH, and in header names '=' is \x3d; a null key, value or
// header value is \N, which no bytes escape to. In JSON, a record is one
// object {"n", "offset", "time", "timestamp_ms", "key", "headers":
// [{"key","value"}...], "value"}, bytes as JSON strings when UTF-8, else
// {"base64":...}, null for null.
func PrepareDecoder(o DecoderOptions) decode.Factory {
	return func(env decode.Env) (decode.Decoder, error) {
		d := &recordDecoder{o: o}
		if o.Values != nil {
			v, err := o.Values(env)
			if err != nil {
				return nil, err
			}
			if _, ok := v.(decode.Learner); ok {
				return nil, errLearner
			}
			d.values = v
		}
		return d, nil
	}
}

// errLearner refuses value decoders that learn from earlier records.
var errLearner = errorString("a decoder that learns from earlier records cannot render Kafka values")

type errorString string

func (e errorString) Error() string { return string(e) }

// recordDecoder renders Kafka records from their metadata and value.
type recordDecoder struct {
	o      DecoderOptions
	values decode.Decoder
}

// timeLayout is RFC 3339 with milliseconds, Kafka's timestamp resolution.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// null is how text shows a null key, value or header value.
const null = `\N`

// Decode writes rec, a Kafka record (its value as payload, its offset,
// timestamp, key and headers as metadata).
func (d *recordDecoder) Decode(w *decode.Writer, rec *decode.Record) error {
	m := &rec.Meta
	if !m.HasSeq {
		return decode.Misfit(0, "not a Kafka record (no offset): --decode kafka reads Kafka log segments")
	}
	value := rec.Payload
	isNull := len(value) == 0 && len(m.Frame) > 0 && valueIsNull(m.Frame)
	var inner []byte
	if d.values != nil && !isNull {
		iw := decode.NewWriter(nil, w.Output(), rec.N)
		if err := d.values.Decode(iw, &decode.Record{N: rec.N, Payload: value}); err != nil {
			return err
		}
		inner = iw.B
	}
	var compact bytes.Buffer
	if d.o.JSONValues && !isNull {
		if err := json.Compact(&compact, value); err != nil {
			return decode.Misfit(0, "the value is not JSON: %v", err)
		}
	}
	w.BeginSeq("offset", uint64(m.Seq))
	if w.JSON() {
		d.json(w, m, value, isNull, inner, compact.Bytes())
		w.End()
		return nil
	}
	sep := ""
	if !w.Output().Number {
		w.B = append(w.B, "offset="...)
		w.B = appendInt(w.B, m.Seq)
		sep = "\t"
	}
	w.B = append(w.B, sep+"time="...)
	if m.Time.IsZero() {
		w.B = append(w.B, null...)
	} else {
		w.B = m.Time.UTC().AppendFormat(w.B, timeLayout)
	}
	w.B = append(w.B, "\tkey="...)
	w.B = appendText(w.B, m.Key, m.Key == nil, false)
	for _, h := range m.Headers {
		w.B = append(w.B, "\theader."...)
		w.B = appendText(w.B, []byte(h.Key), false, true)
		w.B = append(w.B, '=')
		w.B = appendText(w.B, h.Value, h.Value == nil, false)
	}
	switch {
	case isNull:
		w.B = append(w.B, "\tvalue="+null...)
	case d.values != nil:
	case d.o.JSONValues:
		w.B = append(w.B, "\tvalue="...)
		w.B = append(w.B, compact.Bytes()...)
	default:
		w.B = append(w.B, "\tvalue="...)
		w.B = appendText(w.B, value, false, false)
	}
	w.End()
	w.B = append(w.B, inner...)
	return nil
}

// json writes the fields of a record in JSON mode.
func (d *recordDecoder) json(w *decode.Writer, m *decode.Meta, value []byte, isNull bool, inner, compact []byte) {
	w.Key("time")
	if m.Time.IsZero() {
		w.B = append(w.B, "null"...)
	} else {
		w.B = append(w.B, '"')
		w.B = m.Time.UTC().AppendFormat(w.B, timeLayout)
		w.B = append(w.B, '"')
		w.Key("timestamp_ms")
		w.B = appendInt(w.B, m.Time.UnixMilli())
	}
	w.Key("key")
	w.B = appendJSONBytes(w.B, m.Key)
	w.Key("headers")
	w.B = append(w.B, '[')
	for i, h := range m.Headers {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.B = append(w.B, `{"key":`...)
		w.B = decode.AppendJSONBytes(w.B, []byte(h.Key))
		w.B = append(w.B, `,"value":`...)
		w.B = appendJSONBytes(w.B, h.Value)
		w.B = append(w.B, '}')
	}
	w.B = append(w.B, ']')
	w.Key("value")
	switch {
	case isNull:
		w.B = append(w.B, "null"...)
	case d.values != nil:
		w.B = append(w.B, '[')
		lines := bytes.Split(bytes.TrimSuffix(inner, []byte("\n")), []byte("\n"))
		for i, l := range lines {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.B = append(w.B, l...)
		}
		w.B = append(w.B, ']')
	case d.o.JSONValues:
		w.B = append(w.B, compact...)
	default:
		w.B = decode.AppendJSONBytes(w.B, value)
	}
}

// appendJSONBytes appends b as decode.AppendJSONBytes does, or null for nil.
func appendJSONBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	return decode.AppendJSONBytes(dst, b)
}

// valueIsNull reports whether the record frame (RecordFrame's bytes: a
// v2 record, or a v0/v1 message's log entry) holds a null value.
func valueIsNull(frame []byte) bool {
	if r, err := ParseRecord(frame, 0, 2); err == nil && r.Len == int64(len(frame)) {
		return r.ValueLen < 0
	}
	r, err := ParseRecord(frame, 0, 0) // a v0 or v1 message: its magic byte says which
	return err == nil && r.ValueLen < 0
}

const hexDigits = "0123456789abcdef"

// plainText[c] is true for the ASCII bytes that text shows as they are.
var plainText = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '\\'
	}
	return t
}()

// appendText appends b escaped as PrepareDecoder says: \N for null, and
// '=' escaped too in a header name. Runs of bytes shown as they are are
// copied at once.
func appendText(dst, b []byte, isNull, name bool) []byte {
	if isNull {
		return append(dst, null...)
	}
	eq := uint64(wordOnes * '\\')
	if name {
		eq = wordOnes * '='
	}
	start := 0
	for i := 0; i < len(b); {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:]), eq) {
			i += 8
		}
		if i == len(b) {
			break
		}
		c := b[i]
		if plainText[c] && !(name && c == '=') {
			i++
			continue
		}
		if c >= 0x80 {
			if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
				i += n
				continue
			}
		}
		dst = appendEscape(append(dst, b[start:i]...), c)
		i++
		start = i
	}
	return append(dst, b[start:]...)
}

// appendEscape appends the escape of the byte c, which text does not show
// as it is.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '\\':
		return append(dst, '\\', '\\')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
}

// wordOnes has a 1 in every byte of a word.
const wordOnes = 0x0101010101010101

// plainWord reports whether the 8 bytes of x are all shown as they are:
// printable ASCII, no backslash, and none equal to the byte repeated in
// eq. It may say no for a word of such bytes only when another of its
// bytes is not one (borrows and carries start at a byte that fails).
func plainWord(x, eq uint64) bool {
	const high = wordOnes * 0x80
	v := (x - wordOnes*0x20) &^ x // a byte below 0x20
	v |= (x + wordOnes) | x       // a byte above 0x7e
	y := x ^ (wordOnes * '\\')
	v |= (y - wordOnes) &^ y // a backslash
	z := x ^ eq
	v |= (z - wordOnes) &^ z // eq's byte
	return v&high == 0
}

// appendInt appends v in decimal.
func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// Unescape returns the bytes a field of the text form stands for, and
// whether it is null (\N).
func Unescape(s string) (b []byte, isNull bool, err error) {
	if s == null {
		return nil, true, nil
	}
	b = make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(s) {
			return nil, false, errBadEscape
		}
		i++
		switch s[i] {
		case '\\':
			b = append(b, '\\')
		case 't':
			b = append(b, '\t')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 'x':
			if i+2 >= len(s) {
				return nil, false, errBadEscape
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, false, errBadEscape
			}
			b = append(b, byte(v))
			i += 2
		default:
			return nil, false, errBadEscape
		}
	}
	return b, false, nil
}

// errBadEscape is returned by Unescape for text no field escapes to.
var errBadEscape = errorString("kafka: malformed escaped field")
