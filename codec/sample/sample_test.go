package sample

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// TestFilesReproducible: every sample file is written, and written the
// same way twice.
func TestFilesReproducible(t *testing.T) {
	t.Parallel()
	for _, f := range Files {
		var a, b bytes.Buffer
		if err := f.Write(&a); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if err := f.Write(&b); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if a.Len() == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: %d bytes, then %d different ones", f.Name, a.Len(), b.Len())
		}
	}
}

// TestLogRecords: the leveldb sample scans as 1000 records, the events
// and the 100 KiB record in the middle, without damage. (The recfs
// command's tests read every sample back through the binary.)
func TestLogRecords(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteLog(&buf); err != nil {
		t.Fatal(err)
	}
	s := leveldb.NewScanner(bytes.NewReader(buf.Bytes()), int64(buf.Len()), leveldb.Options{Strict: true})
	n := 0
	for s.Next() {
		want := int64(len(Event(n)))
		if n == 500 {
			want = 100 << 10
		}
		if got := s.Record().Len; got != want {
			t.Errorf("record %d: %d bytes, want %d", n, got, want)
		}
		n++
	}
	if err := s.Err(); err != nil || n != 1000 {
		t.Errorf("%d records, %v; want 1000", n, err)
	}
}
