package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// blockPeeker decodes only the start of a transformed recordio block: the
// item count and sizes that the scanner needs to index it. Compressed
// streams are decoded in order, so this stops after the first stream block
// or so instead of inflating a whole block of many megabytes. It keeps its
// decoders between blocks; it is not safe for concurrent use.
type blockPeeker struct {
	zd  *zstd.Decoder
	fr  io.ReadCloser
	buf []byte
}

// peekChunk is how many decoded bytes are fed to the header parser at a time.
const peekChunk = 4096

// header parses the item count and sizes at the start of the block whose
// stored (transformed) bytes are stored. Sizes are bounded by limit.
func (bp *blockPeeker) header(chain []rioTransformer, stored []byte, limit int64) (*packedHdr, error) {
	var r io.Reader = bytes.NewReader(stored)
	for i := len(chain) - 1; i >= 0; i-- {
		var err error
		if r, err = bp.decoder(chain[i], r, i == len(chain)-1, limit); err != nil {
			return nil, err
		}
	}
	if bp.buf == nil {
		bp.buf = make([]byte, peekChunk)
	}
	p := &packedHdr{bound: limit}
	var read int64
	for p.state < 2 {
		n, err := r.Read(bp.buf)
		read += int64(n)
		if read > limit {
			return nil, fmt.Errorf("%w: block header runs past %d bytes", ErrLimit, limit)
		}
		if ferr := p.feed(bp.buf[:n]); ferr != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, ferr)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, decodeErr(err, limit)
		}
	}
	if p.state < 2 {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, p.finish(read))
	}
	return p, nil
}

// decoder returns a streaming decoder undoing t over r. The outermost
// transformer (the first undone) reuses the peeker's decoders; inner ones of
// a chain get fresh ones.
// A zstd frame may not ask for a window larger than the block limit (at
// least 1 MiB): the window is what a streaming decoder allocates.
func (bp *blockPeeker) decoder(t rioTransformer, r io.Reader, outer bool, limit int64) (io.Reader, error) {
	switch t.name {
	case "zstd":
		if !outer || bp.zd == nil {
			d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(uint64(max(limit, 1<<20))))
			if err != nil {
				return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
			}
			if !outer {
				return d.IOReadCloser(), nil
			}
			bp.zd = d
			return d, nil
		}
		if err := bp.zd.Reset(r); err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		return bp.zd, nil
	case "flate":
		if !outer || bp.fr == nil {
			fr := flate.NewReader(r)
			if outer {
				bp.fr = fr
			}
			return fr, nil
		}
		if err := bp.fr.(flate.Resetter).Reset(r, nil); err != nil {
			return nil, fmt.Errorf("%w: flate: %v", ErrCorrupt, err)
		}
		return bp.fr, nil
	}
	return nil, fmt.Errorf("%w: recordio transformer %q not found", ErrUnsupported, t.spec)
}

// decodeErr classifies a decompressor's error.
func decodeErr(err error, limit int64) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: block decodes past %d bytes", ErrLimit, limit)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// errKind returns the sentinel that classifies err (ErrCorrupt by default).
func errKind(err error) error {
	for _, k := range []error{ErrLimit, ErrUnsupported, ErrTruncated} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrCorrupt
}
