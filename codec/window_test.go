package codec

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// slicer is a ByteSlicer over memory.
type slicer struct{ *bytes.Reader }

func (s slicer) Slice(off, n int64) ([]byte, error) {
	b := make([]byte, n)
	k, err := s.ReadAt(b, off)
	return b[:k], err
}

// TestWindow: bytes come from the window while they are in it, from a
// new window otherwise, through a ByteSlicer or a plain reader; at the end
// there is nothing; a file shorter than said is ErrTruncated.
func TestWindow(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i)
	}
	for name, r := range map[string]io.ReaderAt{"reader": bytes.NewReader(data), "slicer": slicer{bytes.NewReader(data)}} {
		w := NewWindow(r, int64(len(data)), 100)
		for _, c := range []struct {
			off  int64
			want int
			n    int // bytes returned
		}{{0, 10, 100}, {50, 10, 50}, {95, 10, 100}, {990, 50, 10}, {1000, 1, 0}, {2000, 1, 0}} {
			b, err := w.At(c.off, c.want)
			if err != nil || len(b) != c.n || (len(b) > 0 && b[0] != byte(c.off)) {
				t.Errorf("%s: At(%d, %d) = %d bytes, %v; want %d", name, c.off, c.want, len(b), err, c.n)
			}
		}
		short := NewWindow(r, 2000, 100)
		if _, err := short.At(950, 100); !errors.Is(err, ErrTruncated) {
			t.Errorf("%s: a file shorter than said: %v", name, err)
		}
	}
	var ce *CorruptError
	if err := ReadFullAt(bytes.NewReader(data), make([]byte, 10), 995, Kafka, "truncated batch"); !errors.As(err, &ce) || ce.Off != 1000 || !errors.Is(err, ErrTruncated) {
		t.Errorf("ReadFullAt past the end: %v", err)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r     io.ReaderAt
	bytes int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes += int64(n)
	return n, err
}

// TestWindowSlides: a window that starts inside the one before keeps the
// bytes they share, so that requests moving forward read each byte of the
// file once, and hand out the right bytes; a request behind the window
// reads afresh.
func TestWindowSlides(t *testing.T) {
	t.Parallel()
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	cr := &countingReader{r: bytes.NewReader(data)}
	w := NewWindow(cr, int64(len(data)), 100)
	// Requests as a scanner makes them: each past the last one, most
	// reaching past the window's end.
	for off, step := int64(0), int64(0); off < int64(len(data)); off += step {
		want := int(min(100, int64(len(data))-off))
		b, err := w.At(off, want)
		if err != nil || len(b) < want || !bytes.Equal(b[:want], data[off:off+int64(want)]) {
			t.Fatalf("At(%d, %d): %d bytes, %v", off, want, len(b), err)
		}
		step = 37 + off%51
	}
	if cr.bytes != int64(len(data)) {
		t.Fatalf("read %d bytes of a %d-byte file", cr.bytes, len(data))
	}
	b, err := w.At(20, 100)
	if err != nil || !bytes.Equal(b[:100], data[20:120]) || cr.bytes != int64(len(data))+100 {
		t.Fatalf("At(20) after the end: %v, %d bytes read", err, cr.bytes)
	}
	short := NewWindow(bytes.NewReader(data[:150]), 300, 100)
	if _, err := short.At(0, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := short.At(60, 100); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "shrank to 150 bytes") {
		t.Fatalf("a slide past a file shorter than said: %v", err)
	}
}

// TestWindowBuf: a window given a buffer large enough reads into it (Buf
// gives it back) and hands out the file's bytes, with garbage left in the
// buffer by the scan before; a buffer too small is ignored, and a
// ByteSlicer's window has none.
func TestWindowBuf(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 3)
	}
	old := bytes.Repeat([]byte{0xee}, 150)
	w := NewWindowBuf(bytes.NewReader(data), int64(len(data)), 100, old)
	for _, off := range []int64{0, 60, 170, 950} {
		want := int(min(100, int64(len(data))-off))
		b, err := w.At(off, want)
		if err != nil || len(b) < want || !bytes.Equal(b[:want], data[off:off+int64(want)]) {
			t.Fatalf("At(%d, %d): %d bytes, %v", off, want, len(b), err)
		}
	}
	if b := w.Buf(); len(b) == 0 || &b[0] != &old[0] {
		t.Fatal("the window did not read into the buffer it was given")
	}
	small := NewWindowBuf(bytes.NewReader(data), int64(len(data)), 100, make([]byte, 99))
	if b, err := small.At(0, 100); err != nil || !bytes.Equal(b[:100], data[:100]) || cap(small.Buf()) != 100 {
		t.Fatalf("a buffer too small: %d bytes, %v, buffer of %d", len(b), err, cap(small.Buf()))
	}
	sl := NewWindowBuf(slicer{bytes.NewReader(data)}, int64(len(data)), 100, old)
	if _, err := sl.At(0, 100); err != nil || sl.Buf() != nil {
		t.Fatalf("a ByteSlicer's window: %v, buffer of %d", err, len(sl.Buf()))
	}
}
