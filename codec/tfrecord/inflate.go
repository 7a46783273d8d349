package tfrecord

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// An Inflated is an io.ReaderAt over the decompressed stream of a GZIP or
// ZLIB TFRecord file, so that a Scanner and ReadRecord work on it
// unchanged. It keeps one decompressor and its position: reads at or after
// that position cost decompressing the bytes in between, and a read before
// it restarts decompression from the beginning of the file. A scan, which
// reads forward, thus decompresses the file once; reading the last record
// of a fresh Inflated costs decompressing the whole file (there are no
// checkpoints). It is safe for concurrent use; reads are serialised.
type Inflated struct {
	src     io.ReaderAt
	srcSize int64
	c       Compression

	mu   sync.Mutex
	zr   io.ReadCloser
	pos  int64 // decompressed offset of the next byte zr yields
	size int64 // decompressed size, -1 until known
}

// NewInflated returns an Inflated over the first size bytes of r,
// compressed with c.
func NewInflated(r io.ReaderAt, size int64, c Compression) (*Inflated, error) {
	if c != Gzip && c != Zlib {
		return nil, fmt.Errorf("%w: compression %v", codec.ErrUnsupported, c)
	}
	return &Inflated{src: r, srcSize: size, c: c, size: -1}, nil
}

// Size returns the decompressed size. The first call decompresses the
// whole file unless a read already reached its end.
func (z *Inflated) Size() (int64, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.size >= 0 {
		return z.size, nil
	}
	zr, err := newDecompressor(z.src, z.srcSize, z.c)
	if err != nil {
		return 0, z.streamErr(err)
	}
	defer zr.Close()
	n, err := io.Copy(io.Discard, zr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, z.streamErr(err)
	}
	z.size = n
	return n, nil
}

// ReadAt reads decompressed bytes [off, off+len(p)).
func (z *Inflated) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("tfrecord: read at negative offset %d", off)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.size >= 0 && off >= z.size {
		return 0, io.EOF
	}
	if z.zr == nil || off < z.pos {
		if z.zr != nil {
			z.zr.Close()
		}
		zr, err := newDecompressor(z.src, z.srcSize, z.c)
		if err != nil {
			z.zr = nil
			return 0, z.streamErr(err)
		}
		z.zr, z.pos = zr, 0
	}
	if skip := off - z.pos; skip > 0 {
		k, err := io.CopyN(io.Discard, z.zr, skip)
		z.pos += k
		if err != nil {
			return 0, z.end(err)
		}
	}
	n, err := io.ReadFull(z.zr, p)
	z.pos += int64(n)
	if err != nil {
		return n, z.end(err)
	}
	return n, nil
}

// end turns the error that ended a read into io.EOF at the end of the
// stream (learning the size), or into a stream error; either way the
// decompressor is dropped. A stream cut short (a file still being written)
// ends where its decompressed bytes end, as it does for Size.
func (z *Inflated) end(err error) error {
	z.zr.Close()
	z.zr = nil
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		z.size = z.pos
		return io.EOF
	}
	return z.streamErr(err)
}

func (z *Inflated) streamErr(err error) error {
	return corrupt(z.pos, fmt.Sprintf("%s stream does not decompress (%v)", z.c, err), codec.ErrCorrupt)
}

// Close releases the decompressor.
func (z *Inflated) Close() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.zr != nil {
		z.zr.Close()
		z.zr = nil
	}
	return nil
}
