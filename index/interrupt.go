package index

import (
	"context"
	"io"

	"github.com/recfs/recfs/codec"
)

// interruptible returns r made to fail its reads with ctx's error once ctx
// is done, so that a scan over it (a build, a proof) ends within a read of
// an interruption whatever it is doing: scanners read all the time, also
// over damage that yields no record, where they have nothing else to
// check ctx at. A mapped r still hands out its bytes (codec.ByteSlicer)
// and lets go of its pages (releaser).
func interruptible(ctx context.Context, r io.ReaderAt) io.ReaderAt {
	if ctx.Done() == nil {
		return r
	}
	c := ctxReader{r: r, ctx: ctx}
	if bs, ok := r.(codec.ByteSlicer); ok {
		return ctxSlicer{c, bs}
	}
	return c
}

// ctxReader is an io.ReaderAt that fails once its context is done.
type ctxReader struct {
	r   io.ReaderAt
	ctx context.Context
}

func (c ctxReader) ReadAt(p []byte, off int64) (int, error) {
	select {
	case <-c.ctx.Done():
		return 0, canceled(c.ctx)
	default:
	}
	return c.r.ReadAt(p, off)
}

// Release lets go of pages of a mapped source.
func (c ctxReader) Release(off, n int64) {
	if rel, ok := c.r.(releaser); ok {
		rel.Release(off, n)
	}
}

// ctxStream is an io.Reader that fails once its context is done.
type ctxStream struct {
	r   io.Reader
	ctx context.Context
}

func (c ctxStream) Read(p []byte) (int, error) {
	if err := canceled(c.ctx); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxWriter is an io.Writer that fails once its context is done.
type ctxWriter struct {
	w   io.Writer
	ctx context.Context
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := canceled(c.ctx); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ctxSlicer is a ctxReader over a codec.ByteSlicer.
type ctxSlicer struct {
	ctxReader
	s codec.ByteSlicer
}

func (c ctxSlicer) Slice(off, n int64) ([]byte, error) {
	select {
	case <-c.ctx.Done():
		return nil, canceled(c.ctx)
	default:
	}
	return c.s.Slice(off, n)
}
