package recordio

import (
	"bytes"
	"slices"
	"testing"
)

// TestTornTail: the first chunks of a block, cut anywhere, are a torn
// tail; a whole block, another magic, chunks out of order or a cut chunk
// whose header disagrees are not.
func TestTornTail(t *testing.T) {
	t.Parallel()
	head := makeRio(t, [][]byte{[]byte("a")}, WriterOptions{}, nil)
	whole := withBlock(t, head, bytes.Repeat([]byte("B"), 100000))
	withTrailer := makeRio(t, [][]byte{[]byte("a")}, WriterOptions{Trailer: true}, []byte("trl"))
	off := int64(len(head))
	if !bytes.Equal(whole[:off], head) || len(whole)-len(head) != 4*chunkSize {
		t.Fatalf("the second block is not 4 chunks after the first file (%d bytes)", len(whole)-len(head))
	}
	check := func(name string, data []byte, off int64, want bool) {
		t.Helper()
		got, why := TornTail(bytes.NewReader(data), off, int64(len(data)))
		if got != want {
			t.Errorf("%s: torn=%v (%s), want %v", name, got, why, want)
		}
		if !got && why == "" {
			t.Errorf("%s: no reason given", name)
		}
	}
	for _, cut := range []int{1, 7, 8, 27, 28, 100, chunkSize, chunkSize + 3, 2*chunkSize + 5000, 3 * chunkSize, 4*chunkSize - 1} {
		check("block cut", whole[:int(off)+cut], off, true)
	}
	check("whole block", whole, off, false)
	tOff := int64(len(withTrailer) - chunkSize)
	check("trailer cut", withTrailer[:len(withTrailer)-100], tOff, true)
	check("whole trailer", withTrailer, tOff, false)
	check("garbage", append(slices.Clone(head), 1, 2, 3), off, false)
	check("header magic", append(slices.Clone(head), head[:40]...), off, false)
	swapped := slices.Concat(head, whole[off+chunkSize:off+2*chunkSize])
	check("chunk 1 first", swapped, off, false)
	skipped := slices.Concat(head, whole[off:off+chunkSize], whole[off+2*chunkSize:off+2*chunkSize+50])
	check("chunk 2 after chunk 0", skipped, off, false)
	bad := slices.Clone(whole[:off+chunkSize+10])
	bad[off+100] ^= 1 // a whole chunk failing its checksum
	check("damaged chunk", bad, off, false)
}

// FuzzTornTail: any bytes after a valid header give an answer without
// panicking, and a cut of a real block is always torn.
func FuzzTornTail(f *testing.F) {
	head := makeRio(f, [][]byte{[]byte("a")}, WriterOptions{}, nil)
	whole := withBlock(f, head, bytes.Repeat([]byte("B"), 70000))
	f.Add(whole[len(head):len(head)+40], uint32(20))
	f.Add([]byte{1, 2, 3}, uint32(0))
	f.Fuzz(func(t *testing.T, tail []byte, cut uint32) {
		data := slices.Concat(head, tail)
		torn, why := TornTail(bytes.NewReader(data), int64(len(head)), int64(len(data)))
		if !torn && why == "" {
			t.Fatal("not torn, no reason")
		}
		real := whole[len(head):]
		c := int(cut % uint32(len(real)))
		if c == 0 {
			return
		}
		data = slices.Concat(head, real[:c])
		if torn, why := TornTail(bytes.NewReader(data), int64(len(head)), int64(len(data))); !torn {
			t.Fatalf("a real block cut at %d: %s", c, why)
		}
	})
}

// withBlock returns file followed by one more block holding item, as an
// append writes it.
func withBlock(t testing.TB, file, item []byte) []byte {
	t.Helper()
	tl, err := NewTail(bytes.NewReader(file), int64(len(file)), TailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := tl.Encode([][]byte{item})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(file, b)
}
