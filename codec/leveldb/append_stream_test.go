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

// TestWriteRecordFrom: a record written from a stream is byte-identical to
// one written whole, at every starting offset class, and a short stream is
// ErrShortInput.
func TestWriteRecordFrom(t *testing.T) {
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
