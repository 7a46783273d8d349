package decode

import (
	"encoding/base64"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Output says how decoded records are written.
type Output struct {
	// JSON writes JSON Lines: one object per line, each starting with
	// "n" (the record number) and, where the format numbers what the line
	// shows, the sequence field ("seq", "offset"). Bytes are JSON strings
	// when valid UTF-8, else {"base64":"..."}.
	JSON bool
	// Number starts every text line with the record number, zero-padded
	// to Width digits as the record's name in a mount, a tab, and where
	// the format has one NAME=SEQ and a tab ("000003\tseq=42\tput k v").
	Number bool
	// Width is the number of digits of a record number (0: 6).
	Width int
}

// Writer collects what a decoder writes for one record: lines in text
// mode, objects in JSON mode, each begun with [Writer.Begin] or
// [Writer.BeginSeq] and ended with [Writer.End]. B is the output so far;
// decoders append to it directly between Begin and End.
type Writer struct {
	B   []byte
	out Output
	n   int64
}

// NewWriter returns a Writer appending to dst the lines of record n.
func NewWriter(dst []byte, o Output, n int64) *Writer {
	return &Writer{B: dst, out: o, n: n}
}

// JSON reports whether the writer writes JSON Lines.
func (w *Writer) JSON() bool { return w.out.JSON }

// Output returns the writer's output mode.
func (w *Writer) Output() Output { return w.out }

// N returns the number of the record being written (-1 for a summary).
func (w *Writer) N() int64 { return w.n }

// Begin starts a line that carries no sequence number: with Number, the
// record number and a tab; in JSON mode `{"n":N`. The lines of a summary
// (see [Summarizer]) begin with "summary" and a tab, or `{"summary":true`.
func (w *Writer) Begin() {
	switch {
	case w.out.JSON && w.n < 0:
		w.B = append(w.B, `{"summary":true`...)
	case w.out.JSON:
		w.B = append(w.B, `{"n":`...)
		w.B = strconv.AppendInt(w.B, w.n, 10)
	case w.out.Number && w.n < 0:
		w.B = append(w.B, "summary\t"...)
	case w.out.Number:
		w.B = AppendRecordNumber(w.B, w.n, w.out.Width)
		w.B = append(w.B, '\t')
	}
}

// BeginSeq starts a line showing what the format numbers seq, name being
// what it calls the number ("seq", "offset"): with Number,
// "N\tNAME=SEQ\t"; in JSON mode `{"n":N,"NAME":SEQ`.
func (w *Writer) BeginSeq(name string, seq uint64) {
	w.Begin()
	switch {
	case w.out.JSON:
		w.Key(name)
		w.B = strconv.AppendUint(w.B, seq, 10)
	case w.out.Number:
		w.B = append(w.B, name...)
		w.B = append(w.B, '=')
		w.B = strconv.AppendUint(w.B, seq, 10)
		w.B = append(w.B, '\t')
	}
}

// End ends the line (the object in JSON mode).
func (w *Writer) End() {
	if w.out.JSON {
		w.B = append(w.B, '}')
	}
	w.B = append(w.B, '\n')
}

// Key writes `,"k":` in JSON mode, before the value of field k; k must
// need no escaping.
func (w *Writer) Key(k string) {
	w.B = append(w.B, ',', '"')
	w.B = append(w.B, k...)
	w.B = append(w.B, '"', ':')
}

// AppendRecordNumber appends n zero-padded to width digits (0: 6), as the
// record's name in a mount.
func AppendRecordNumber(dst []byte, n int64, width int) []byte {
	if width <= 0 {
		width = 6
	}
	return AppendPadded(dst, uint64(n), width)
}

// AppendPadded appends v in decimal, zero-padded to width digits.
func AppendPadded(dst []byte, v uint64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], v, 10)
	for i := len(d); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// AppendJSONBytes appends b as a JSON string when it is valid UTF-8, else
// in the marked form {"base64":"..."}, so that no byte is lost and text
// stays greppable.
func AppendJSONBytes(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return appendJSONString(dst, b)
	}
	return AppendJSONBase64(dst, b)
}

// AppendJSONBase64 appends b in the marked form {"base64":"..."}.
func AppendJSONBase64(dst, b []byte) []byte {
	dst = append(dst, `{"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, `"}`...)
}

// AppendJSONString appends s, which must be valid UTF-8, as a JSON
// string. Only quotes, backslashes and characters that do not print
// (control characters, DEL, U+2028...) are escaped, so that "<", "&" and
// every printable character stay themselves for grep.
func AppendJSONString(dst []byte, s string) []byte {
	return appendJSONString(dst, unsafe.Slice(unsafe.StringData(s), len(s))) // read only
}

func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n <= 1 || unicode.IsPrint(r) {
				i += n // invalid bytes pass (the caller checked), printing runes stay
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendUnicodeEscape(dst, r)
			i += n
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = appendUnicodeEscape(dst, rune(c))
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendUnicodeEscape appends r as \uXXXX (a surrogate pair past U+FFFF).
func appendUnicodeEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		return appendUnicodeEscape(appendUnicodeEscape(dst, r1), r2)
	}
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

const hexDigits = "0123456789abcdef"
