package kafka

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// appendTextBytes is appendText's rule applied a byte at a time, the
// reference its word-at-a-time path must agree with.
func appendTextBytes(dst, b []byte, name bool) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c >= 0x20 && c < 0x7f && c != '\\' && !(name && c == '='):
			dst = append(dst, c)
			i++
			continue
		case c >= 0x80:
			if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
				dst = append(dst, b[i:i+n]...)
				i += n
				continue
			}
		}
		dst = appendEscape(dst, c)
		i++
	}
	return dst
}

// TestAppendTextWords: appendText, which skips plain runs eight bytes at
// a time, escapes exactly as the byte-at-a-time rule, wherever the bytes
// that need escaping sit in a word (every byte value at every position of
// runs of plain text, and random bytes).
func TestAppendTextWords(t *testing.T) {
	t.Parallel()
	var inputs [][]byte
	plain := []byte("abcdefghijklmnopqrstuvwxyz 0123456789~!")
	for c := range 256 {
		for at := range 17 {
			b := append([]byte{}, plain[:17]...)
			b[at] = byte(c)
			inputs = append(inputs, b)
		}
	}
	rng := rand.New(rand.NewPCG(24, 26))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = plain[rng.IntN(len(plain))]
			if rng.IntN(8) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte("héllo wörld, ünïcode runs ✓✓✓✓ and a=b\\c"), bytes.Repeat([]byte{0xff}, 9), bytes.Repeat([]byte{0x7f}, 9))
	for _, in := range inputs {
		for _, name := range []bool{false, true} {
			got := appendText(nil, in, false, name)
			if want := appendTextBytes(nil, in, name); !bytes.Equal(got, want) {
				t.Fatalf("appendText(%q, name=%v) = %q, want %q", in, name, got, want)
			}
		}
	}
}

// BenchmarkAppendText escapes a 1 KiB value of text lines (a newline
// every 40-odd bytes), as cat --decode kafka renders the bench's values.
func BenchmarkAppendText(b *testing.B) {
	var v []byte
	for len(v) < 1024 {
		v = append(v, "mike delta romeo yankee kilo tango bravo\n"...)
	}
	b.SetBytes(int64(len(v)))
	var dst []byte
	for b.Loop() {
		dst = appendText(dst[:0], v, false, false)
	}
}
