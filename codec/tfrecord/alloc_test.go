package tfrecord

import (
	"io"
	"testing"
)

// TestWriterAllocations counts the allocations of a Writer of small
// records, as leveldb's test does: the buffer is allocated once for a whole
// flush past its first KiBs (codec.Sink.Room), nothing per record.
func TestWriterAllocations(t *testing.T) {
	rec := make([]byte, 99)
	for _, c := range []struct {
		records int
		max     float64
	}{{1, 3}, {1000, 8}, {100_000, 8}} {
		n := testing.AllocsPerRun(3, func() {
			w := NewWriter(io.Discard, WriterOptions{})
			for range c.records {
				if _, err := w.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		})
		if n > c.max {
			t.Errorf("a writer of %d records of 99 bytes allocates %v times, want at most %v", c.records, n, c.max)
		}
	}
}
