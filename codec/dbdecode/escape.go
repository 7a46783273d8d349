package dbdecode

import (
	"encoding/binary"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// ErrEscape is returned by [Unescape] for text that no escaped field can be.
var ErrEscape = errors.New("dbdecode: malformed escaped field")

const hexDigits = "0123456789abcdef"

// asciiPlain[c] is true for the ASCII bytes that print as themselves in
// any field: 0x21 to 0x7e except the backslash.
var asciiPlain = func() (t [256]bool) {
	for c := 0x21; c <= 0x7e; c++ {
		t[c] = c != '\\'
	}
	return t
}()

// Masks of bytes repeated eight times, for plainPrefix.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix returns the length of b's longest prefix, in whole words of
// eight bytes, of ASCII that prints as itself: bytes from 0x21 (0x20 with
// space) to 0x7e, no backslash. It tests eight bytes at a time.
func plainPrefix(b []byte, space bool) int {
	low := uint64(0x21)
	if space {
		low = 0x20
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		less := (x - ones*low) &^ x & highs         // a byte below low
		more := ((x + ones*(127-0x7e)) | x) & highs // a byte above 0x7e
		bs := x ^ (ones * '\\')
		slash := (bs - ones) &^ bs & highs // a backslash
		if less|more|slash != 0 {
			break
		}
	}
	return i
}

// appendEscaped appends b escaped as the package documentation says: a
// space prints as itself only in the last field of a line (last).
func appendEscaped(dst, b []byte, last bool) []byte {
	start := 0
	for i := 0; i < len(b); {
		if k := plainPrefix(b[i:], last); k > 0 {
			i += k
			continue
		}
		c := b[i]
		if asciiPlain[c] || c == ' ' && last {
			i++
			continue
		}
		size := 1
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(b[i:])
			if r != utf8.RuneError && unicode.IsPrint(r) {
				i += n
				continue
			}
			if r != utf8.RuneError {
				size = n // a non-printing character: every byte escaped
			}
		}
		dst = append(dst, b[start:i]...)
		for _, c := range b[i : i+size] {
			if c == '\\' {
				dst = append(dst, '\\', '\\')
			} else {
				dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			}
		}
		i += size
		start = i
	}
	return append(dst, b[start:]...)
}

// appendHex appends b as lowercase hex digits.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendUint appends a decimal number.
func appendUint(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }

// Unescape returns the bytes an escaped field stands for: \\ is a
// backslash, \xNN the byte NN, every other byte itself. It fails on a
// backslash that starts neither, and on a line break (no field holds one).
func Unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\r' {
			return nil, ErrEscape
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 >= len(s) || s[i+1] != 'x' {
			return nil, ErrEscape
		}
		hi, lo := unhex(s[i+2]), unhex(s[i+3])
		if hi < 0 || lo < 0 {
			return nil, ErrEscape
		}
		out = append(out, byte(hi<<4|lo))
		i += 3
	}
	return out, nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}
