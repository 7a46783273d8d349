package codec

import (
	"bytes"
	"errors"
	"io"
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
