package tfrecord

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
)

// literalGzip returns data as a GZIP member of one DEFLATE block of the
// fixed Huffman code holding only literals: about 8.5 bits a byte and no
// block boundary inside, so the index has one checkpoint for all of it
// and a read near its end needs every compressed byte before.
func literalGzip(data []byte) []byte {
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	var acc uint64
	var nacc uint
	put := func(v uint64, n uint) { // LSB first
		acc |= v << nacc
		for nacc += n; nacc >= 8; nacc -= 8 {
			out = append(out, byte(acc))
			acc >>= 8
		}
	}
	code := func(c uint64, n uint) { // Huffman codes go MSB first
		r := uint64(0)
		for i := range n {
			r = r<<1 | c>>i&1
		}
		put(r, n)
	}
	put(1, 1) // the final block
	put(1, 2) // of fixed codes
	for _, b := range data {
		if b < 144 {
			code(0x30+uint64(b), 8)
		} else {
			code(0x190+uint64(b)-144, 9)
		}
	}
	code(0, 7) // end of block
	put(0, 7)  // to a byte boundary
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(out, uint32(len(data)))
}

// stopAfterAt is a ReaderAt that counts the bytes read through it and
// closes done once it has read stopAt of them (never when stopAt < 0).
type stopAfterAt struct {
	r      io.ReaderAt
	stopAt int64
	done   chan struct{}

	mu     sync.Mutex
	n      int64 // bytes read
	closed int64 // n when done closed, -1 before
}

func (s *stopAfterAt) ReadAt(p []byte, off int64) (int, error) {
	k, err := s.r.ReadAt(p, off)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += int64(k)
	if s.closed < 0 && s.stopAt >= 0 && s.n >= s.stopAt {
		s.closed = s.n
		close(s.done)
	}
	return k, err
}

// TestInflatedStopsReadAhead: a read whose decoder first reads the span's
// compressed bytes into memory (16 MiB here: a record after one DEFLATE
// block of 8 MiB of literals, one checkpoint) honours its done channel
// while it reads them, not only once it inflates: with done closed before
// the read it reads at most one chunk (readAheadChunk) of the source, and
// with done closed partway at most one chunk past that point; both fail with
// ErrStopped naming where decompression stood. Counted in source bytes,
// so a read-ahead that ignores done fails here, however fast the
// machine. The same Inflated then reads the record whole.
func TestInflatedStopsReadAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 22))
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	file := AppendRecord(AppendRecord(AppendRecord(nil, []byte("before")), big), []byte("after"))
	z := literalGzip(file)
	res, recs := indexAll(t, z, Gzip, IndexOptions{})
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	x := res.Index
	if cp := x.Points[x.span(recs[2].Off)]; int64(len(z))-cp.In/8 < 6*readAheadChunk {
		t.Fatalf("the last record's checkpoint is at compressed byte %d of %d: the shard does not make a long read-ahead", cp.In/8, len(z))
	}
	for _, tc := range []struct {
		name   string
		stopAt int64 // source bytes read when done closes; 0: before the read
	}{
		{"done before the read", 0},
		{"done partway", 3 * readAheadChunk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &stopAfterAt{r: bytes.NewReader(z), stopAt: tc.stopAt, done: make(chan struct{}), closed: -1}
			if tc.stopAt == 0 {
				src.closed = 0
				close(src.done)
			}
			in, err := NewInflated(src, int64(len(z)), x, InflatedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 5)
			_, err = ReadRecord(in.Stopping(src.done), recs[2], p, 0)
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("read with done closed: %v, want ErrStopped", err)
			}
			if src.closed < 0 {
				t.Fatalf("done never closed: the read took %d source bytes", src.n)
			}
			if src.n > tc.stopAt+readAheadChunk {
				t.Errorf("read %d source bytes, done closed at %d: want at most %d", src.n, src.closed, tc.stopAt+readAheadChunk)
			}
			if got := in.Decompressed(); got > windowSize {
				t.Errorf("decompressed %d bytes, want at most %d", got, windowSize)
			}
			t.Logf("%v; %d source bytes read, %d of them after done closed", err, src.n, src.n-src.closed)
			src.stopAt = -1
			if k, err := ReadRecord(in.Stopping(make(chan struct{})), recs[2], p, 0); err != nil || string(p[:k]) != "after" {
				t.Fatalf("whole read after the stopped one: %q, %v", p[:k], err)
			}
		})
	}
}
