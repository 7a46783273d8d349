package codec

import (
	"errors"
	"io"
)

// SinkFlushAt is the buffered size at which a record writer built on Sink
// pushes its bytes on.
const SinkFlushAt = 64 << 10

// ErrWriterClosed is returned by a record writer used after Close.
var ErrWriterClosed = errors.New("codec: record writer is closed")

// Sink is the buffered destination the record writers of the formats share:
// it collects framed bytes in Buf, writes them on to the destination, and
// remembers the first error and whether it was closed. The zero value is
// not usable; use NewSink.
type Sink struct {
	// Buf holds the bytes not yet written to the destination; a writer
	// appends its framing to it.
	Buf    []byte
	w      io.Writer
	err    error
	closed bool
}

// NewSink returns a Sink that writes to w.
func NewSink(w io.Writer) Sink { return Sink{w: w} }

// Usable reports why the sink cannot take a record, if it cannot: it was
// closed, or an earlier write or input failed.
func (s *Sink) Usable() error {
	if s.closed {
		return ErrWriterClosed
	}
	return s.err
}

// Fail records err as the sink's error and returns it.
func (s *Sink) Fail(err error) error {
	s.err = err
	return err
}

// ReadFrag reads len(b) bytes of a record's input from r. An input that
// ends early is ErrShortInput; a failure is also recorded as the sink's
// error, since part of the record may already be buffered or written.
func (s *Sink) ReadFrag(r io.Reader, b []byte) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = ErrShortInput
		}
		return s.Fail(err)
	}
	return nil
}

// Write writes b to the destination at once, past the buffer; a short
// write is io.ErrShortWrite. An error is recorded as the sink's.
func (s *Sink) Write(b []byte) error {
	n, err := s.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return s.Fail(err)
	}
	return nil
}

// sinkSmall is the buffer capacity up to which Room grows the buffer as
// append does; past it, the buffer is made big enough for a whole flush.
const sinkSmall = 4 << 10

// Room makes room in Buf for n more bytes: as append would while the
// buffer is small (a writer of one small record allocates little), then
// at once to SinkFlushAt+n bytes (a writer of many records allocates its
// buffer once, instead of again at each doubling up to a flush).
func (s *Sink) Room(n int) {
	if cap(s.Buf)-len(s.Buf) >= n {
		return
	}
	size := max(2*cap(s.Buf), len(s.Buf)+n)
	if size > sinkSmall {
		size = max(size, SinkFlushAt+n)
	}
	b := make([]byte, len(s.Buf), size)
	copy(b, s.Buf)
	s.Buf = b
}

// FlushIfFull flushes once SinkFlushAt bytes or more are buffered.
func (s *Sink) FlushIfFull() error {
	if len(s.Buf) >= SinkFlushAt {
		return s.Flush()
	}
	return nil
}

// Flush writes the buffered bytes to the destination.
func (s *Sink) Flush() error {
	if s.err != nil {
		return s.err
	}
	if len(s.Buf) == 0 {
		return nil
	}
	if err := s.Write(s.Buf); err != nil {
		return err
	}
	s.Buf = s.Buf[:0]
	return nil
}

// Close marks the sink closed and flushes it; it does not close the
// destination. Closing twice is a no-op that returns the sink's error.
func (s *Sink) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	return s.Flush()
}
