package leveldb

import (
	"io"
	"testing"
)

// TestWriterAllocations counts the allocations of a Writer of many small
// records: its buffer grows as append would while small, then at once to a
// whole flush, not again at each doubling (20 allocations for 100k records
// of 99 bytes when it grew by append alone), and nothing per record.
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
