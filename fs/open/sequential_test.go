package open

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// checkWindowRead compares one read through w with the same read of data.
func checkWindowRead(t *testing.T, w *windowReader, data []byte, off int64, n int) {
	t.Helper()
	want := make([]byte, n)
	wn, werr := bytes.NewReader(data).ReadAt(want, off)
	got := make([]byte, n)
	gn, gerr := w.ReadAt(got, off)
	// An empty read may or may not report io.EOF at the end (bytes.Reader
	// does, os.File does not); both obey io.ReaderAt.
	if gn != wn || !bytes.Equal(got[:gn], want[:wn]) || (n > 0 && (gerr == nil) != (werr == nil)) {
		t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d, %v", n, off, gn, gerr, wn, werr)
	}
}

func TestWindowReader(t *testing.T) {
	data := codectest.VectorPayload(7, 10_000)
	src := codectest.Counting(data)
	w := newWindowReader(src, 1024)
	checkWindowRead(t, w, data, 100, 10) // off: straight through
	if src.Reads.Load() != 1 {
		t.Fatalf("disabled window made %d calls", src.Reads.Load())
	}
	w.on.Store(true)
	src.Reads.Store(0)
	for _, c := range []struct {
		off       int64
		n         int
		wantCalls int // cumulative
	}{
		{0, 100, 1},    // fills [0, 1024)
		{100, 100, 1},  // inside
		{900, 124, 1},  // ends exactly at the window's end
		{1000, 100, 2}, // crosses it: refill at 1000
		{1000, 512, 2}, // half the window: still windowed
		{50, 10, 3},    // before the window: refill
		{0, 600, 4},    // larger than half: straight through
		{9_990, 10, 5}, // last bytes: short window
		{9_995, 10, 6}, // past the end: io.EOF with 5 bytes
		{10_000, 1, 7}, // at the end
		{20_000, 4, 8}, // far past the end
		{-1, 4, 9},     // negative offset: straight through, error
	} {
		checkWindowRead(t, w, data, c.off, c.n)
		if src.Reads.Load() != int64(c.wantCalls) {
			t.Errorf("after %d bytes at %d: %d calls to the file, want %d", c.n, c.off, src.Reads.Load(), c.wantCalls)
		}
	}
}

// FuzzWindowReader checks that any sequence of reads through a window gives
// the bytes and errors of direct reads.
func FuzzWindowReader(f *testing.F) {
	f.Add(uint16(300), []byte{0, 10, 5, 200, 100, 7})
	f.Fuzz(func(t *testing.T, size uint16, ops []byte) {
		data := codectest.VectorPayload(int(size), int(size))
		w := newWindowReader(bytes.NewReader(data), 64)
		w.on.Store(true)
		for i := 0; i+1 < len(ops) && i < 200; i += 2 {
			off := int64(ops[i]) * int64(size) / 200
			checkWindowRead(t, w, data, off, int(ops[i+1]%48))
		}
	})
}
