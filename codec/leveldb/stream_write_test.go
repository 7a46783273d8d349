package leveldb

import (
	"bytes"
	"testing"
)

// TestWriteRecordFromMatchesWriteRecord checks that a record streamed in
// (WriteRecordFrom) is written exactly as the same record given whole
// (WriteRecord), in every chunk flavour and from a block tail too short for
// a header: an append of a large record to a RocksDB or pebble log must go
// on in the log's own flavour, as its writer would.
func TestWriteRecordFromMatchesWriteRecord(t *testing.T) {
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
