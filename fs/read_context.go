package fs

import (
	"context"
	"io"

	"github.com/recfs/recfs/index"
)

// StoppingRecords is Records whose reads can stop when their caller gives
// up (ctx done: an interrupted FUSE request, a killed reader), failing
// with an error matching context.Canceled (EINTR) instead of running to
// their end. *index.Table implements it: a read of a compressed TFRecord
// record decompresses a span from its checkpoint, which a record of very
// compressible data makes long.
type StoppingRecords interface {
	// ReadAtContext is Records.ReadAt stopping with ctx.
	ReadAtContext(ctx context.Context, n int64, p []byte, off int64) (int, error)
	// ReadAtGenerationContext is Versioned.ReadAtGeneration stopping
	// with ctx.
	ReadAtGenerationContext(ctx context.Context, gen uint64, n int64, p []byte, off int64) (int, error)
}

var _ StoppingRecords = (*index.Table)(nil)

// ContextReaderAt is a Handle whose reads can stop when ctx is done. The
// handles of record files implement it.
type ContextReaderAt interface {
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
}

// ReadHandle reads h at off as ReadAt does, stopping with ctx where h can
// (ContextReaderAt): how adapters pass a request's cancellation to a read.
func ReadHandle(ctx context.Context, h io.ReaderAt, p []byte, off int64) (int, error) {
	if c, ok := h.(ContextReaderAt); ok && ctx.Done() != nil {
		return c.ReadAtContext(ctx, p, off)
	}
	return h.ReadAt(p, off)
}
