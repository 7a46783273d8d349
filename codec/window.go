package codec

import (
	"errors"
	"fmt"
	"io"
)

// Window reads a file of known size through one window of bytes, as the
// formats' scanners read: from a ByteSlicer the window is a slice of its
// bytes, never a copy; from another reader the bytes are read into the
// window's own buffer, allocated on first use, each byte once while the
// requests move forward (a window that starts inside the one before keeps
// the bytes they share). The zero Window is not usable; use NewWindow.
type Window struct {
	r      io.ReaderAt
	slicer ByteSlicer
	size   int64
	n      int64 // window size
	buf    []byte
	win    []byte // the bytes at hand: a prefix of buf, or a slice of slicer
	off    int64  // file offset of win[0]
}

// NewWindow returns a Window over the first size bytes of r, reading n
// bytes at a time.
func NewWindow(r io.ReaderAt, size int64, n int) Window {
	w := Window{r: r, size: max(size, 0), n: int64(n)}
	w.slicer, _ = r.(ByteSlicer)
	return w
}

// NewWindowBuf is NewWindow reading into buf rather than a buffer of its
// own when buf holds the window (min(n, size) bytes; a smaller or nil buf
// is ignored): the buffer a finished scan gave back (Buf), so that scans
// that run one after another on a goroutine read into one buffer instead
// of allocating, zeroing and faulting in one each.
func NewWindowBuf(r io.ReaderAt, size int64, n int, buf []byte) Window {
	w := NewWindow(r, size, n)
	if w.slicer == nil && int64(cap(buf)) >= min(w.n, w.size) {
		w.buf = buf[:cap(buf)]
	}
	return w
}

// Buf returns the buffer w reads into (nil when it has none, or slices a
// ByteSlicer's bytes), for NewWindowBuf; w and the bytes it returned must
// not be used after.
func (w *Window) Buf() []byte { return w.buf }

// At returns the bytes from file offset off to the end of the window, at
// least want of them unless the file ends first (want must not exceed the
// window size); nil at or past the end of the file. A read that comes back
// short is an error: ErrTruncated, "file shrank", when the reader gave
// none; the window is then empty.
func (w *Window) At(off int64, want int) ([]byte, error) {
	end := w.off + int64(len(w.win))
	if off >= w.off && off <= end && (off+int64(want) <= end || end >= w.size) {
		return w.win[off-w.off:], nil
	}
	if off >= w.size {
		return nil, nil
	}
	n := min(w.n, w.size-off)
	var b []byte
	var k int
	var err error
	if w.slicer != nil {
		b, err = w.slicer.Slice(off, n)
		k = len(b)
	} else {
		if int64(len(w.buf)) < n {
			w.buf = make([]byte, min(w.n, w.size))
		}
		b = w.buf[:n]
		keep := 0
		if off > w.off && off < end {
			// The bytes from off that the window holds move to its
			// front; only those after them are read.
			keep = copy(b, w.win[off-w.off:])
		}
		k, err = w.r.ReadAt(b[keep:], off+int64(keep))
		k += keep
	}
	if int64(k) < n || (w.slicer != nil && err != nil) {
		w.win = nil
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: file shrank to %d bytes during the scan (expected %d)", ErrTruncated, off+int64(k), w.size)
		}
		return nil, err
	}
	w.win, w.off = b, off
	return b, nil
}

// ReadFullAt reads len(b) bytes of r at off. A read that comes back short
// is the reader's error, or when it gave none a *CorruptError of format f
// and the given reason wrapping ErrTruncated, at the offset where the
// bytes ran out.
func ReadFullAt(r io.ReaderAt, b []byte, off int64, f Format, reason string) error {
	k, err := r.ReadAt(b, off)
	if k == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return &CorruptError{Format: f, Off: off + int64(k), Reason: reason, Err: ErrTruncated}
	}
	return err
}
