package codec_test

import (
	"io"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
)

// recordWriter is a format's record writer.
type recordWriter interface {
	WriteRecord(p []byte) (int64, error)
	Close() error
}

// TestWriterAllocations: the record writers of leveldb logs and TFRecord
// files, given many small records, allocate their buffer once for a whole
// flush past their first KiBs (codec.Sink.Room; 20 allocations for 100k
// records of 99 bytes when it grew by append alone), nothing per record;
// a writer of one record allocates little.
func TestWriterAllocations(t *testing.T) {
	rec := make([]byte, 99)
	for _, w := range []struct {
		name string
		open func() recordWriter
	}{
		{"leveldb", func() recordWriter { return leveldb.NewWriter(io.Discard, leveldb.WriterOptions{}) }},
		{"tfrecord", func() recordWriter { return tfrecord.NewWriter(io.Discard, tfrecord.WriterOptions{}) }},
	} {
		for _, c := range []struct {
			records int
			max     float64
		}{{1, 3}, {1000, 8}, {100_000, 8}} {
			var err error
			n := testing.AllocsPerRun(3, func() {
				rw := w.open()
				for range c.records {
					if _, e := rw.WriteRecord(rec); e != nil && err == nil {
						err = e
					}
				}
				if e := rw.Close(); e != nil && err == nil {
					err = e
				}
			})
			if err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			if n > c.max {
				t.Errorf("a %s writer of %d records of 99 bytes allocates %v times, want at most %v", w.name, c.records, n, c.max)
			}
		}
	}
}
