package leveldb

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestWriteRecordFromMatchesWriteRecord checks that a record streamed in
// (WriteRecordFrom) is written exactly as the same record given whole
// (WriteRecord), in every chunk flavour and from a block tail too short for
// a header: an append of a large record to a RocksDB or pebble log must go
// on in the log's own flavour, as its writer would.
func TestWriteRecordFromMatchesWriteRecord(t *testing.T) {
	t.Parallel()
	sizes := []int{0, 1, 100, logBlockSize - 11, 3*logBlockSize + 5}
	flavours := []struct {
		name string
		o    WriterOptions
	}{
		{"legacy", WriterOptions{}},
		{"recyclable", WriterOptions{Recyclable: true, LogNum: 0x01020304}},
		{"walsync", WriterOptions{WALSync: true, LogNum: 9, SyncedOffset: 77}},
	}
	for _, fl := range flavours {
		for _, start := range []int64{0, logBlockSize - 5, logBlockSize - 12} {
			o := fl.o
			o.Offset = start
			var whole, streamed bytes.Buffer
			ww, sw := NewWriter(&whole, o), NewWriter(&streamed, o)
			for i, n := range sizes {
				rec := bytes.Repeat([]byte{byte('a' + i)}, n)
				wo, err := ww.WriteRecord(rec)
				if err != nil {
					t.Fatal(err)
				}
				so, err := sw.WriteRecordFrom(bytes.NewReader(rec), int64(n))
				if err != nil {
					t.Fatal(err)
				}
				if wo != so {
					t.Errorf("%s from %d: record %d at %d streamed, %d whole", fl.name, start, i, so, wo)
				}
			}
			if err := ww.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole.Bytes(), streamed.Bytes()) {
				t.Errorf("%s from %d: streamed records differ from whole ones (%d vs %d bytes)", fl.name, start, streamed.Len(), whole.Len())
			}
		}
	}
}

// TestWriteRecordFrom: a record written from a stream is byte-identical to
// one written whole, at every starting offset class, and a short stream is
// ErrShortInput.
func TestWriteRecordFrom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	for _, pre := range []int{0, 1, 32768 - 7 - 3, 32768 - 7, 5000} {
		for _, size := range []int{0, 1, 32761, 32762, 100000, 3*32768 + 11} {
			rec := make([]byte, size)
			rng.Read(rec)
			var prefix [][]byte
			if pre > 0 {
				prefix = [][]byte{make([]byte, pre)}
			}
			want, _ := writeLog(t, append(slices.Clone(prefix), rec), WriterOptions{AppEngine: pre == 5000})
			var out bytes.Buffer
			w := NewWriter(&out, WriterOptions{AppEngine: pre == 5000})
			for _, p := range prefix {
				if _, err := w.WriteRecord(p); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.WriteRecordFrom(bytes.NewReader(rec), int64(size)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("prefix %d, size %d: streamed log differs", pre, size)
			}
		}
	}
	w := NewWriter(io.Discard, WriterOptions{})
	if _, err := w.WriteRecordFrom(bytes.NewReader(make([]byte, 10)), 11); !errors.Is(err, codec.ErrShortInput) {
		t.Fatalf("short input: %v", err)
	}
}
