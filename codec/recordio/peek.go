package recordio

import (
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/zstd"
)

// blockPeeker decodes only the start of a transformed recordio block: the
// item count and sizes that the scanner needs to index it. The block's
// stored bytes and its decoded bytes are both streams, so this holds
// neither whole: it stops after the first stream block or so instead of
// inflating a whole block of many megabytes. It keeps its decoders between
// blocks; it is not safe for concurrent use.
type blockPeeker struct {
	dec streamDecoders
	buf []byte
}

// peekChunk is how many decoded bytes are fed to the header parser at a time.
const peekChunk = 4096

// header parses the item count and sizes at the start of the decoded stream
// of src (a block's stored, transformed bytes). Sizes are bounded by limit;
// zstd windows by window. With whole, it also decodes the rest of the block
// (discarding it) and returns the decoded length, which must not pass limit;
// otherwise rawLen is the length the header claims.
func (bp *blockPeeker) header(chain []transformer, src io.Reader, limit, window int64, whole bool) (p *packedHdr, rawLen int64, err error) {
	r, err := bp.dec.open(chain, src, window)
	if err != nil {
		return nil, 0, err
	}
	if bp.buf == nil {
		bp.buf = make([]byte, peekChunk)
	}
	p = &packedHdr{bound: limit}
	var read int64
	for p.state < 2 {
		n, err := r.Read(bp.buf)
		read += int64(n)
		if read > limit {
			return nil, 0, fmt.Errorf("%w: block header runs past %d bytes", codec.ErrLimit, limit)
		}
		if ferr := p.feed(bp.buf[:n]); ferr != nil {
			return nil, 0, fmt.Errorf("%w: %v", codec.ErrCorrupt, ferr)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, decodeErr(err, window)
		}
	}
	if p.state < 2 {
		return nil, 0, fmt.Errorf("%w: %v", codec.ErrCorrupt, p.finish(read))
	}
	if !whole {
		return p, p.hdrLen + p.sum, nil
	}
	rest, err := io.CopyBuffer(io.Discard, io.LimitReader(r, limit+1-read), bp.buf)
	if err != nil {
		return nil, 0, decodeErr(err, window)
	}
	read += rest
	if read > limit {
		return nil, 0, fmt.Errorf("%w: block decodes past %d bytes", codec.ErrLimit, limit)
	}
	if err := p.finish(read); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", codec.ErrCorrupt, err)
	}
	return p, read, nil
}

// decodeErr classifies a decompressor's error.
func decodeErr(err error, window int64) error {
	var rf *failure
	if errors.As(err, &rf) {
		return err
	}
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: zstd window larger than the %d-byte stream limit", codec.ErrLimit, window)
	}
	return fmt.Errorf("%w: %v", codec.ErrCorrupt, err)
}

// errKind returns the sentinel that classifies err (ErrCorrupt by default).
func errKind(err error) error {
	for _, k := range []error{codec.ErrLimit, codec.ErrUnsupported, codec.ErrTruncated} {
		if errors.Is(err, k) {
			return k
		}
	}
	return codec.ErrCorrupt
}
