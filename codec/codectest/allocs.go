package codectest

import "testing"

// RecordWriter is what WriterAllocs writes through: a format's record
// writer.
type RecordWriter interface {
	WriteRecord(p []byte) (int64, error)
	Close() error
}

// WriterAllocs checks that a record writer's allocations do not grow with
// the records it writes: newWriter returns a fresh writer, which is given
// n records of 99 bytes and closed. One record may take 3 allocations, a
// thousand or a hundred thousand records 8 (the buffer grows as append
// would while small, then once to a whole flush).
func WriterAllocs(t *testing.T, newWriter func() RecordWriter) {
	t.Helper()
	rec := make([]byte, 99)
	for _, c := range []struct {
		records int
		max     float64
	}{{1, 3}, {1000, 8}, {100_000, 8}} {
		var err error
		n := testing.AllocsPerRun(3, func() {
			w := newWriter()
			for range c.records {
				if _, e := w.WriteRecord(rec); e != nil && err == nil {
					err = e
				}
			}
			if e := w.Close(); e != nil && err == nil {
				err = e
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if n > c.max {
			t.Errorf("a writer of %d records of 99 bytes allocates %v times, want at most %v", c.records, n, c.max)
		}
	}
}
