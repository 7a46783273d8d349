package tfrecord

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// Compression says how a whole TFRecord file is compressed.
type Compression uint8

// The compressions TensorFlow's TFRecordWriter offers.
const (
	None Compression = iota // plain records
	Gzip                    // one or more GZIP members (RFC 1952)
	Zlib                    // a ZLIB stream (RFC 1950)
)

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Zlib:
		return "zlib"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// detectPeek is how much of a compressed stream Detect decompresses to
// look for the second record.
const detectPeek = 1 << 20

// Detect tells whether the first size bytes of r are a TFRecord file, and
// how it is compressed. A plain file must carry a valid length checksum at
// offset 0 with a length that fits in the file, and either another valid
// length field right after that record, or a valid data checksum (a file of
// one record, or one whose second record is damaged). A compressed file is recognised by its GZIP or ZLIB header
// and a valid first length field in the decompressed bytes (and a valid
// second one when the first record ends within the first MiB). Anything
// else is an error matching codec.ErrFormat.
func Detect(r io.ReaderAt, size int64) (Compression, error) {
	ok, err := plainAt(r, size)
	if err != nil {
		return None, err
	}
	if ok {
		return None, nil
	}
	var m [3]byte
	if n, _ := r.ReadAt(m[:], 0); n < 2 {
		return None, fmt.Errorf("%w: %d bytes are too short", codec.ErrFormat, size)
	}
	var c Compression
	switch {
	case m[0] == 0x1f && m[1] == 0x8b && m[2] == 8:
		c = Gzip
	case m[0]&0x0f == 8 && m[0]>>4 <= 7 && (uint16(m[0])<<8|uint16(m[1]))%31 == 0 && m[1]&0x20 == 0:
		c = Zlib
	default:
		return None, fmt.Errorf("%w: no valid length checksum at offset 0, and no GZIP or ZLIB header", codec.ErrFormat)
	}
	zr, err := newDecompressor(r, size, c)
	if err != nil {
		return None, fmt.Errorf("%w: %s header but %v", codec.ErrFormat, c, err)
	}
	defer zr.Close()
	var h [HeaderSize]byte
	if _, err := io.ReadFull(zr, h[:]); err != nil {
		return None, fmt.Errorf("%w: %s stream does not start with a record (%v)", codec.ErrFormat, c, err)
	}
	l0, ok := ParseHeader(h[:])
	if !ok {
		return None, fmt.Errorf("%w: %s stream has no valid length checksum at offset 0", codec.ErrFormat, c)
	}
	// The second header, when it lies within the first MiB: decompress up
	// to it (a file that is not TFRecord costs only its first bytes).
	if l0 < detectPeek {
		skip := int64(l0) + FooterSize
		if k, _ := io.CopyN(io.Discard, zr, skip); k == skip {
			if n, _ := io.ReadFull(zr, h[:]); n == HeaderSize {
				if _, ok := ParseHeader(h[:]); !ok {
					return None, fmt.Errorf("%w: %s stream has no valid length checksum at offset %d", codec.ErrFormat, c, skip+HeaderSize)
				}
			}
		}
	}
	return c, nil
}

// plainAt reports whether r holds a plain TFRecord file (see Detect).
func plainAt(r io.ReaderAt, size int64) (bool, error) {
	if size < Overhead {
		return false, nil
	}
	var h [HeaderSize]byte
	if err := readFull(r, h[:], 0); err != nil {
		return false, ignoreTrunc(err)
	}
	l0, ok := ParseHeader(h[:])
	if !ok || l0 > uint64(size-Overhead) {
		return false, nil
	}
	if next := int64(l0) + Overhead; next+HeaderSize <= size {
		if err := readFull(r, h[:], next); err != nil {
			return false, ignoreTrunc(err)
		}
		if _, ok := ParseHeader(h[:]); ok {
			return true, nil
		}
	}
	// The first record ends the file, or the next one is damaged: accept
	// the file when the first record's data checksum verifies too.
	s := NewScanner(r, size, Options{Strict: true, Window: 64 << 10})
	ok = s.Next()
	return ok, ignoreTrunc(s.Err())
}

// ignoreTrunc drops content errors: they mean "not this format", while I/O
// errors stay errors.
func ignoreTrunc(err error) error {
	if errors.Is(err, codec.ErrTruncated) || errors.Is(err, codec.ErrCorrupt) {
		return nil
	}
	return err
}

// newDecompressor returns a reader of the decompressed bytes of the first
// size bytes of r, for Detect: it reads ahead little, since Detect
// decompresses at most the first MiB.
func newDecompressor(r io.ReaderAt, size int64, c Compression) (io.ReadCloser, error) {
	src := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 32<<10)
	switch c {
	case Gzip:
		return gzip.NewReader(src)
	case Zlib:
		return zlib.NewReader(src)
	}
	return nil, fmt.Errorf("%w: compression %v", codec.ErrUnsupported, c)
}
