package tfrecord

import (
	"encoding/binary"
	"errors"
	"io"
)

// The containers around DEFLATE data: GZIP members (RFC 1952), one after
// another in a .gz file, and the ZLIB stream (RFC 1950).

var (
	// errNotMember: the bytes are not a member header (garbage).
	errNotMember = errors.New("not a member header")
	// errCut: the file ends inside a header or trailer.
	errCut = errors.New("cut short")
)

// GZIP header flags.
const (
	gzFHCRC    = 1 << 1
	gzFEXTRA   = 1 << 2
	gzFNAME    = 1 << 3
	gzFCOMMENT = 1 << 4
	gzReserved = 0xe0
)

// maxHeaderString bounds a member's file name and comment.
const maxHeaderString = 64 << 10

// readHeader reads the header of a GZIP member or of a ZLIB stream from br
// and returns its length.
func readHeader(br peeker, c Compression) (int64, error) {
	if c == Zlib {
		h, err := br.Peek(2)
		if len(h) < 2 {
			return 0, cutOrErr(err)
		}
		if !zlibHeader(h[0], h[1]) {
			return 0, errNotMember
		}
		br.Discard(2)
		return 2, nil
	}
	h, err := br.Peek(10)
	if len(h) < 10 {
		if len(h) >= 3 && !gzipHeader(h) {
			return 0, errNotMember
		}
		return 0, cutOrErr(err)
	}
	if !gzipHeader(h) {
		return 0, errNotMember
	}
	flg := h[3]
	br.Discard(10)
	n := int64(10)
	if flg&gzFEXTRA != 0 {
		x, err := br.Peek(2)
		if len(x) < 2 {
			return 0, cutOrErr(err)
		}
		xlen := int(binary.LittleEndian.Uint16(x))
		br.Discard(2)
		k, err := br.Discard(xlen)
		n += 2 + int64(k)
		if k < xlen {
			return 0, cutOrErr(err)
		}
	}
	for _, f := range []byte{gzFNAME, gzFCOMMENT} {
		if flg&f == 0 {
			continue
		}
		for k := 0; ; k++ {
			b, err := br.ReadByte()
			if err != nil {
				return 0, cutOrErr(err)
			}
			n++
			if b == 0 {
				break
			}
			if k == maxHeaderString {
				return 0, errNotMember
			}
		}
	}
	if flg&gzFHCRC != 0 {
		k, err := br.Discard(2)
		n += int64(k)
		if k < 2 {
			return 0, cutOrErr(err)
		}
	}
	return n, nil
}

// gzipHeader reports whether h (at least 4 bytes) starts a GZIP member:
// the magic, DEFLATE, no reserved flag.
func gzipHeader(h []byte) bool {
	return h[0] == 0x1f && h[1] == 0x8b && h[2] == 8 && (len(h) < 4 || h[3]&gzReserved == 0)
}

// zlibHeader reports whether cmf, flg start a ZLIB stream we can read:
// DEFLATE with a window of at most 32 KiB, a valid check, no preset
// dictionary.
func zlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0 && flg&0x20 == 0
}

// cutOrErr turns the end of the input into errCut and keeps I/O errors.
func cutOrErr(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errCut
	}
	return err
}

// trailerSize is the length of a member's trailer: CRC-32 and ISIZE for
// GZIP, Adler-32 for ZLIB.
func trailerSize(c Compression) int {
	if c == Zlib {
		return 4
	}
	return 8
}

// trailerOK reports whether t (trailerSize bytes) is the trailer of a
// member whose output had checksum sum and n bytes.
func trailerOK(c Compression, t []byte, sum uint32, n int64) bool {
	if c == Zlib {
		return binary.BigEndian.Uint32(t) == sum
	}
	return binary.LittleEndian.Uint32(t) == sum && binary.LittleEndian.Uint32(t[4:]) == uint32(n)
}
