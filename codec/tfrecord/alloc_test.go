package tfrecord

import (
	"io"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// TestWriterAllocations: a Writer of many small records allocates its
// buffer once for a whole flush past its first KiBs (20 allocations for
// 100k records of 99 bytes when it grew by append alone), nothing per
// record.
func TestWriterAllocations(t *testing.T) {
	codectest.WriterAllocs(t, func() codectest.RecordWriter {
		return NewWriter(io.Discard, WriterOptions{})
	})
}
