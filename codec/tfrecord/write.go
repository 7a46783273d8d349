package tfrecord

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// writerFlushAt is the buffered size at which a Writer pushes bytes on.
const writerFlushAt = codec.SinkFlushAt

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Offset is the length of the destination when appending to an
	// existing file; the offsets WriteRecord returns continue from it.
	// TFRecord has no blocks, so it changes no byte that is written.
	Offset int64
}

// A Writer writes records in the TFRecord format, byte-identical to
// TensorFlow's uncompressed TFRecordWriter. It buffers; call Flush or
// Close. It is not safe for concurrent use.
type Writer struct {
	s   codec.Sink
	off int64
}

// NewWriter returns a writer that appends records to w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	return &Writer{s: codec.NewSink(w), off: max(o.Offset, 0)}
}

// WriteRecord appends p as one record and returns the offset of its
// length field.
func (w *Writer) WriteRecord(p []byte) (int64, error) {
	if err := w.s.Usable(); err != nil {
		return 0, err
	}
	off := w.off
	if len(p) >= writerFlushAt {
		// A large record goes straight to the destination.
		if err := w.Flush(); err != nil {
			return off, err
		}
		var h [HeaderSize]byte
		PutHeader(&h, uint64(len(p)))
		var f [FooterSize]byte
		binary.LittleEndian.PutUint32(f[:], maskCRC(crc32c(p)))
		for _, b := range [][]byte{h[:], p, f[:]} {
			if err := w.s.Write(b); err != nil {
				return off, err
			}
		}
		w.off += EncodedLen(int64(len(p)))
		return off, nil
	}
	w.s.Room(int(EncodedLen(int64(len(p)))))
	w.s.Buf = AppendRecord(w.s.Buf, p)
	w.off += EncodedLen(int64(len(p)))
	return off, w.s.FlushIfFull()
}

// WriteRecordFrom appends size bytes read from r as one record, streaming
// them through a fixed buffer, and returns the record's offset. If r fails
// or ends early (codec.ErrShortInput), part of the record may already be
// written: the caller must cut the destination back to the returned offset.
func (w *Writer) WriteRecordFrom(r io.Reader, size int64) (int64, error) {
	if err := w.s.Usable(); err != nil {
		return 0, err
	}
	if size < 0 {
		return 0, errors.New("tfrecord: negative record size")
	}
	off := w.off
	var h [HeaderSize]byte
	PutHeader(&h, uint64(size))
	w.s.Buf = append(w.s.Buf, h[:]...)
	frag := make([]byte, min(size, writerFlushAt))
	crc := uint32(0)
	for left := size; left > 0; {
		k := min(left, int64(len(frag)))
		if err := w.s.ReadFrag(r, frag[:k]); err != nil {
			return off, err
		}
		crc = crc32cUpdate(crc, frag[:k])
		w.s.Buf = append(w.s.Buf, frag[:k]...)
		left -= k
		if err := w.s.FlushIfFull(); err != nil {
			return off, err
		}
	}
	w.s.Buf = binary.LittleEndian.AppendUint32(w.s.Buf, maskCRC(crc))
	w.off += EncodedLen(size)
	return off, w.s.FlushIfFull()
}

// Offset returns the length of the file so far, including the starting
// Offset and bytes not yet flushed.
func (w *Writer) Offset() int64 { return w.off }

// Flush writes the buffered bytes to the destination.
func (w *Writer) Flush() error { return w.s.Flush() }

// Close flushes the writer. It does not close the destination. Closing
// twice is a no-op.
func (w *Writer) Close() error { return w.s.Close() }
