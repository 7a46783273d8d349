package etcddecode

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// appendEscaped appends b with printable UTF-8 kept: a backslash as \\,
// control characters, bytes that are not UTF-8 and, unless spaces is set,
// spaces as \xNN.
func appendEscaped(dst, b []byte, spaces bool) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRune(b[i:])
			if r != utf8.RuneError || n > 1 {
				dst = append(dst, b[i:i+n]...)
				i += n
				continue
			}
		}
		switch {
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == ' ' && spaces:
			dst = append(dst, ' ')
		case c <= ' ' || c == 0x7f || c >= 0x80:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return dst
}
