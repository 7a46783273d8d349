package open

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/index"
)

// seqWindow is the read-ahead window of sequential tables.
const seqWindow = 1 << 20

// Seq is a table built for reading many records in file order, and the
// source it reads; Close closes both.
type Seq struct {
	*index.Table
	src io.Closer
}

// Close closes the table and its source.
func (s Seq) Close() error {
	s.Table.Close()
	return s.src.Close()
}

// Sequential scans the record file target names afresh (no saved index is
// read or written) and returns a table whose reads suit a pass in file
// order: a local file's through a read-ahead window (one read system call
// per small record would dominate), an object's through its cache's large
// sequential GETs. For cat of many records and for verify.
func Sequential(ctx context.Context, target string, o Options) (Seq, error) {
	return kindOf(target).seq(ctx, target, o)
}

// localSeq is Sequential for a local path.
func localSeq(ctx context.Context, path string, o Options) (Seq, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return Seq{}, err
	}
	return seqOf(ctx, path, f, fi.Size(), o)
}

// seqOf builds the sequential table of f, the local file at path of size
// bytes; the Seq closes f, and so does seqOf when it fails.
func seqOf(ctx context.Context, path string, f *os.File, size int64, o Options) (Seq, error) {
	io := indexOptions(path, o.Index)
	done := o.progress("indexing "+path, &io)
	wr := newWindowReader(f, seqWindow)
	t, err := index.Build(ctx, wr, size, io)
	done()
	if err != nil {
		f.Close()
		return Seq{}, fmt.Errorf("%s: %w", path, err)
	}
	wr.on.Store(true)
	logrus.WithFields(logrus.Fields{"file": path, "format": t.Format().String(), "records": t.Len()}).Debug("sequential table ready")
	return Seq{Table: t, src: f}, nil
}

// indexOptions applies to o what index.Open infers from a local file's
// name, for a source index.Open does not open by name.
func indexOptions(name string, o index.Options) index.Options {
	return index.InferOptions(name, o)
}

// windowReader serves small reads from a window of the file read ahead in
// one call, so that walking many small records in file order costs one
// system call per window instead of one (or more) per record. It passes
// reads straight through until enabled (the index's parallel scan reads all
// over the file) and for reads as large as half the window.
type windowReader struct {
	r    io.ReaderAt
	on   atomic.Bool
	mu   sync.Mutex
	buf  []byte // the window, allocated on first use
	off  int64  // file offset of buf[0]
	n    int    // valid bytes in buf
	fill int    // window size
}

// newWindowReader returns a windowReader over r with a window of size bytes.
func newWindowReader(r io.ReaderAt, size int) *windowReader {
	return &windowReader{r: r, fill: size}
}

// ReadAt implements io.ReaderAt.
func (w *windowReader) ReadAt(p []byte, off int64) (int, error) {
	if !w.on.Load() || off < 0 || len(p) > w.fill/2 {
		return w.r.ReadAt(p, off)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if off < w.off || off+int64(len(p)) > w.off+int64(w.n) {
		if w.buf == nil {
			w.buf = make([]byte, w.fill)
		}
		m, err := w.r.ReadAt(w.buf, off)
		w.off, w.n = off, m
		if m < len(p) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return copy(p, w.buf[:m]), err
		}
	}
	return copy(p, w.buf[off-w.off:w.n]), nil
}
