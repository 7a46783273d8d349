package tfrecord

import (
	"bytes"
	"io"
)

// Starting a DEFLATE decoder on a bit. A block can start on any bit of a
// byte, but a decoder starts on a byte, and a stored block inside the data
// realigns to the byte boundaries of the stream it was written in, so the
// bits cannot simply be shifted down. Instead the decoder is given a few
// synthetic bytes first: empty blocks, s bits short of a whole number of
// bytes (mod 8), followed by the last 8-s bits of the byte holding the
// block's first bit (at bit s). From there on it reads the file's bytes as
// they are, on the file's byte boundaries. The empty blocks produce no
// output and leave the window as it was.

// emptyFixed is an empty block with the fixed codes (BFINAL 0, BTYPE 01,
// then the end-of-block code, seven zero bits): 10 bits.
var emptyFixed = bitString{{0, 1}, {1, 2}, {0, 7}}

// emptyDynamic is an empty block with dynamic codes, 91 bits: HLIT 257,
// HDIST 1, the code length code giving lengths 1 to symbols 1 and 18 (18
// entries in RFC 1951's order), then literal 0 and end-of-block of length
// 1, 255 zero lengths between them (code 18 with 138, then 117), one
// distance code of length 1; then the end-of-block code.
var emptyDynamic = func() bitString {
	b := bitString{{0, 1}, {2, 2}, {0, 5}, {0, 5}, {14, 4}}
	for i := range 18 {
		l := uint32(0)
		if i == 2 || i == 17 { // symbols 18 and 1 in the order 16, 17, 18, 0, 8, … 14, 1
			l = 1
		}
		b = append(b, bitField{l, 3})
	}
	// Code length codes: symbol 1 is 0, symbol 18 is 1.
	b = append(b, bitField{0, 1}, bitField{1, 1}, bitField{127, 7}, bitField{1, 1}, bitField{106, 7}, bitField{0, 1}, bitField{0, 1})
	return append(b, bitField{1, 1}) // end of block: literal 0 is 0, 256 is 1
}()

// bitField is a value written in n bits, least significant first.
type bitField struct {
	v uint32
	n uint
}

type bitString []bitField

func (s bitString) len() uint {
	var n uint
	for _, f := range s {
		n += f.n
	}
	return n
}

// alignPrefix returns empty blocks of a length that is s modulo 8 (s in
// 1..7).
func alignPrefix(s uint) bitString {
	var p bitString
	if s%2 == 1 {
		p = append(p, emptyDynamic...) // 91 bits: 3 modulo 8
	}
	for p.len()%8 != s {
		p = append(p, emptyFixed...) // 10 bits: 2 modulo 8
	}
	return p
}

// alignedHead returns the bytes a decoder reads before the file's byte
// after b when the block starts at bit s (1..7) of b, and the number of
// synthetic bits they hold before b's bits.
func alignedHead(s uint, b byte) ([]byte, int64) {
	p := alignPrefix(s)
	p = append(p, bitField{uint32(b >> s), 8 - s})
	var out []byte
	var acc uint64
	var n uint
	for _, f := range p {
		acc |= uint64(f.v) << n
		n += f.n
		for n >= 8 {
			out = append(out, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	return out, int64(len(out)*8) - int64(8-s)
}

// readerAt returns a reader of data's bits from bit on, for a decoder
// started on a block boundary there (synthetic head first when bit is not
// on a byte).
func readerAt(data []byte, bit int64) io.Reader {
	k, s := bit/8, uint(bit%8)
	if s == 0 {
		return bytes.NewReader(data[k:])
	}
	head, _ := alignedHead(s, data[k])
	return io.MultiReader(bytes.NewReader(head), bytes.NewReader(data[k+1:]))
}
