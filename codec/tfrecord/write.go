package tfrecord

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// writerFlushAt is the buffered size at which a Writer pushes bytes on.
const writerFlushAt = 64 << 10

var errWriterClosed = errors.New("tfrecord: writer is closed")

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
	w      io.Writer
	buf    []byte
	off    int64
	err    error
	closed bool
}

// NewWriter returns a writer that appends records to w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	return &Writer{w: w, off: max(o.Offset, 0)}
}

// WriteRecord appends p as one record and returns the offset of its
// length field.
func (w *Writer) WriteRecord(p []byte) (int64, error) {
	if err := w.usable(); err != nil {
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
			if err := w.write(b); err != nil {
				return off, err
			}
		}
		w.off += EncodedLen(int64(len(p)))
		return off, nil
	}
	w.buf = AppendRecord(w.buf, p)
	w.off += EncodedLen(int64(len(p)))
	if len(w.buf) >= writerFlushAt {
		return off, w.Flush()
	}
	return off, nil
}

// WriteRecordFrom appends size bytes read from r as one record, streaming
// them through a fixed buffer, and returns the record's offset. If r fails
// or ends early (codec.ErrShortInput), part of the record may already be
// written: the caller must cut the destination back to the returned offset.
func (w *Writer) WriteRecordFrom(r io.Reader, size int64) (int64, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	if size < 0 {
		return 0, errors.New("tfrecord: negative record size")
	}
	off := w.off
	var h [HeaderSize]byte
	PutHeader(&h, uint64(size))
	w.buf = append(w.buf, h[:]...)
	frag := make([]byte, min(size, writerFlushAt))
	crc := uint32(0)
	for left := size; left > 0; {
		k := min(left, int64(len(frag)))
		if _, err := io.ReadFull(r, frag[:k]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = codec.ErrShortInput
			}
			w.err = err
			return off, err
		}
		crc = crc32cUpdate(crc, frag[:k])
		w.buf = append(w.buf, frag[:k]...)
		left -= k
		if len(w.buf) >= writerFlushAt {
			if err := w.Flush(); err != nil {
				return off, err
			}
		}
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, maskCRC(crc))
	w.off += EncodedLen(size)
	if len(w.buf) >= writerFlushAt {
		return off, w.Flush()
	}
	return off, nil
}

func (w *Writer) usable() error {
	if w.closed {
		return errWriterClosed
	}
	return w.err
}

func (w *Writer) write(b []byte) error {
	n, err := w.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
	}
	return err
}

// Offset returns the length of the file so far, including the starting
// Offset and bytes not yet flushed.
func (w *Writer) Offset() int64 { return w.off }

// Flush writes the buffered bytes to the destination.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.write(w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Close flushes the writer. It does not close the destination. Closing
// twice is a no-op.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	return w.Flush()
}
