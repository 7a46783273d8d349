package wlog

import (
	"encoding/binary"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/recfs/recfs/codec"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Compression compresses each record as Prometheus's writer does:
	// only when that makes it smaller.
	Compression Compression
	// Offset is where in its segment the writer starts (the size of what
	// is there already); 0 for a new segment.
	Offset int64
}

// A Writer frames records into one segment the way Prometheus's writer
// does: fragments filling 32 KiB pages, a page with fewer than 7 bytes left
// zero-filled, a record compressed when that makes it smaller. Close leaves
// the last page partial, as in a live segment; ClosePage zero-fills it, as
// Prometheus does when it closes a segment. It is not safe for concurrent
// use.
type Writer struct {
	sink codec.Sink
	o    WriterOptions
	off  int64 // segment offset of the next byte
	comp []byte
}

// NewWriter returns a Writer appending to w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	return &Writer{sink: codec.NewSink(w), o: o, off: o.Offset}
}

// WriteRecord writes rec as one record and returns the offset of its first
// fragment header. Nothing is written through before Flush or Close, or
// before 64 KiB are buffered.
func (w *Writer) WriteRecord(rec []byte) (int64, error) {
	if err := w.sink.Usable(); err != nil {
		return 0, err
	}
	comp := None
	if w.o.Compression != None && len(rec) > 0 {
		if c := w.compress(rec); len(c) < len(rec) {
			rec, comp = c, w.o.Compression
		}
	}
	if PageSize-w.off%PageSize < HeaderSize {
		w.pad()
	}
	start := w.off
	for i := 0; i == 0 || len(rec) > 0; i++ {
		room := PageSize - w.off%PageSize - HeaderSize
		part := rec[:min(int64(len(rec)), room)]
		rec = rec[len(part):]
		kind := byte(kindMiddle)
		switch {
		case i == 0 && len(rec) == 0:
			kind = kindFull
		case i == 0:
			kind = kindFirst
		case len(rec) == 0:
			kind = kindLast
		}
		var h [HeaderSize]byte
		h[0] = kind | comp.flag()
		binary.BigEndian.PutUint16(h[1:], uint16(len(part)))
		binary.BigEndian.PutUint32(h[3:], codec.CRC32C(part))
		w.sink.Buf = append(append(w.sink.Buf, h[:]...), part...)
		w.off += HeaderSize + int64(len(part))
		if PageSize-w.off%PageSize < HeaderSize {
			w.pad()
		}
	}
	return start, w.sink.FlushIfFull()
}

// pad zero-fills the rest of the current page.
func (w *Writer) pad() {
	if n := (PageSize - w.off%PageSize) % PageSize; n > 0 {
		w.sink.Buf = append(w.sink.Buf, make([]byte, n)...)
		w.off += n
	}
}

// compress returns rec compressed as the options say, in a buffer of w's.
func (w *Writer) compress(rec []byte) []byte {
	switch w.o.Compression {
	case Snappy:
		w.comp = snappy.Encode(w.comp[:cap(w.comp)], rec)
	case Zstd:
		w.comp = zstdEncoder().EncodeAll(rec, w.comp[:0])
	default:
		return rec
	}
	return w.comp
}

var (
	zstdEncOnce sync.Once
	zstdEnc     *zstd.Encoder
)

// zstdEncoder returns the package's zstd encoder (safe for concurrent
// EncodeAll calls).
func zstdEncoder() *zstd.Encoder {
	zstdEncOnce.Do(func() { zstdEnc, _ = zstd.NewWriter(nil) })
	return zstdEnc
}

// Offset returns the segment offset the next record would start at (before
// any page padding).
func (w *Writer) Offset() int64 { return w.off }

// Flush writes what is buffered through to the destination.
func (w *Writer) Flush() error { return w.sink.Flush() }

// Close flushes the writer and marks it closed; the last page stays
// partial. It does not close the destination.
func (w *Writer) Close() error { return w.sink.Close() }

// ClosePage zero-fills the last page, as Prometheus does to a segment it
// closes, then closes the writer.
func (w *Writer) ClosePage() error {
	if err := w.sink.Usable(); err != nil {
		return err
	}
	w.pad()
	return w.sink.Close()
}
