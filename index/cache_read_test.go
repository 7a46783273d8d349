package index

import (
	"bytes"
	"runtime"
	"testing"
)

// TestReadSizedAllocatesOnce: a saved table is read into one buffer of its
// size (io.ReadAll grew it by doubling, allocating about three times the
// file and keeping up to twice it), and a file that grew or shrank since
// its stat is read whole, up to the bound.
func TestReadSizedAllocatesOnce(t *testing.T) {
	const size = 32 << 20
	src := bytes.Repeat([]byte{7}, size)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := readSized(bytes.NewReader(src), size, 1<<30)
	runtime.ReadMemStats(&after)
	if err != nil || len(b) != size {
		t.Fatalf("read %d bytes, %v; want %d", len(b), err, size)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/8 {
		t.Errorf("reading %d bytes allocated %d", size, got)
	}
	for _, c := range []struct {
		name              string
		file, stat, bound int64
		want              int64
	}{
		{"grown", 100, 10, 1000, 100},
		{"shrunk", 10, 100, 1000, 10},
		{"past bound", 100, 10, 50, 51},
		{"empty", 0, 0, 10, 0},
	} {
		b, err := readSized(bytes.NewReader(make([]byte, c.file)), c.stat, c.bound)
		if err != nil || int64(len(b)) != c.want {
			t.Errorf("%s: %d bytes, %v; want %d", c.name, len(b), err, c.want)
		}
	}
}
