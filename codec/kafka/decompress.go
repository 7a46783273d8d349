package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/recfs/recfs/codec"
)

// DefaultMaxDecoded is the largest decompressed batch a Scanner or
// ReadBatch accepts unless told otherwise: a batch that would decompress to
// more is damage of the limit kind, and no more than this is ever
// allocated for it.
const DefaultMaxDecoded = 64 << 20

// xerialMagic starts snappy data framed the way Kafka's Java clients
// (snappy-java's stream format) write it: the magic, a version and a
// compatible version (int32 each), then blocks of int32 length + raw snappy.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// xerialHeader is the size of the xerial magic plus its two versions.
const xerialHeader = 16

// ErrTooLarge is returned by Decompress for data that decompresses to more
// than the limit. It matches codec.ErrLimit.
var ErrTooLarge = fmt.Errorf("%w: kafka: decompressed batch exceeds the limit", codec.ErrLimit)

// Decompress decompresses src, compressed with c, into dst's space
// (dst[:0], grown as needed) and returns the result. Data that would
// decompress to more than limit bytes is ErrTooLarge, found without
// allocating more than about limit bytes; data that does not decompress is
// an error matching codec.ErrCorrupt, an unknown codec codec.ErrUnsupported.
func Decompress(dst []byte, c Compression, src []byte, limit int64) ([]byte, error) {
	var out []byte
	var err error
	switch c {
	case None:
		if int64(len(src)) > limit {
			return nil, ErrTooLarge
		}
		return append(dst[:0], src...), nil
	case Gzip:
		out, err = gunzip(dst[:0], src, limit)
	case Snappy:
		out, err = unsnappy(dst[:0], src, limit)
	case LZ4:
		out, err = unlz4(dst[:0], src, limit)
	case Zstd:
		out, err = unzstd(dst[:0], src, limit)
	default:
		return nil, fmt.Errorf("%w: kafka: compression codec %d", codec.ErrUnsupported, uint8(c))
	}
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrTooLarge):
		return nil, err
	}
	return nil, fmt.Errorf("%w: kafka: %v data: %v", codec.ErrCorrupt, c, err)
}

// readLimited appends what r yields to dst, up to limit bytes in all; more
// is ErrTooLarge. The buffer grows by doubling, never past limit + 1.
func readLimited(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	for idle := 0; ; {
		if len(dst) == cap(dst) {
			if int64(len(dst)) > limit {
				return nil, ErrTooLarge
			}
			grow := min(max(2*int64(cap(dst)), 64<<10), limit+1)
			nb := make([]byte, len(dst), grow)
			copy(nb, dst)
			dst = nb
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if idle = idle + 1; n > 0 {
			idle = 0
		} else if idle > 100 && err == nil {
			return nil, io.ErrNoProgress
		}
		if int64(len(dst)) > limit {
			return nil, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

var gzipPool sync.Pool // *gzip.Reader

func gunzip(dst, src []byte, limit int64) ([]byte, error) {
	br := bytes.NewReader(src)
	zr, _ := gzipPool.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(br)
	} else {
		err = zr.Reset(br)
	}
	if err != nil {
		return nil, err
	}
	defer gzipPool.Put(zr)
	return readLimited(dst, zr, limit)
}

var lz4Pool = sync.Pool{New: func() any { return lz4.NewReader(nil) }}

func unlz4(dst, src []byte, limit int64) ([]byte, error) {
	zr := lz4Pool.Get().(*lz4.Reader)
	defer lz4Pool.Put(zr)
	zr.Reset(bytes.NewReader(src))
	return readLimited(dst, zr, limit)
}

// unsnappy decodes raw snappy, or xerial-framed snappy when src starts
// with its magic.
func unsnappy(dst, src []byte, limit int64) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) || len(src) < xerialHeader {
		return snappyBlock(dst, src, limit)
	}
	for p := src[xerialHeader:]; len(p) > 0; {
		if len(p) < 4 {
			return nil, errors.New("xerial block length cut short")
		}
		n := binary.BigEndian.Uint32(p)
		if uint64(n) > uint64(len(p)-4) {
			return nil, errors.New("xerial block runs past the data")
		}
		var err error
		if dst, err = snappyBlock(dst, p[4:4+n], limit); err != nil {
			return nil, err
		}
		p = p[4+n:]
	}
	return dst, nil
}

// snappyBlock appends the decoding of one raw snappy block to dst, refusing
// a block that declares more than what is left of limit before decoding.
func snappyBlock(dst, src []byte, limit int64) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if int64(len(dst))+int64(n) > limit {
		return nil, ErrTooLarge
	}
	if cap(dst)-len(dst) < n {
		// Grow by doubling (never past the limit), so that a stream of
		// blocks costs a few copies, not one per block.
		nb := make([]byte, len(dst), min(max(2*int64(cap(dst)), int64(len(dst)+n)), limit))
		copy(nb, dst)
		dst = nb
	}
	out, err := s2.Decode(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return nil, err
	}
	return dst[:len(dst)+len(out)], nil
}

// zstdPools holds pools of zstd decoders, one pool per limit (decoders
// bound their memory at creation).
var zstdPools sync.Map // int64 → *sync.Pool

func unzstd(dst, src []byte, limit int64) ([]byte, error) {
	p, ok := zstdPools.Load(limit)
	if !ok {
		p, _ = zstdPools.LoadOrStore(limit, &sync.Pool{New: func() any {
			window := min(max(limit, zstd.MinWindowSize), 1<<30)
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(max(limit, 1))), zstd.WithDecoderMaxWindow(uint64(window)))
			if err != nil {
				panic(err) // only for invalid options, which these are not
			}
			return d
		}})
	}
	pool := p.(*sync.Pool)
	d := pool.Get().(*zstd.Decoder)
	defer pool.Put(d)
	out, err := d.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || (err == nil && int64(len(out)) > limit) {
		return nil, ErrTooLarge
	}
	return out, err
}
