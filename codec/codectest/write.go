package codectest

import (
	"bytes"
	"os"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
)

// LogBytes returns recs written as a leveldb log by the codec's writer,
// with the offset of each record's first chunk.
func LogBytes(t testing.TB, recs [][]byte, o leveldb.WriterOptions) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, o)
	offs := make([]int64, len(recs))
	for i, r := range recs {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		offs[i] = off
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), offs
}

// WriteLog writes recs as a leveldb log at path and returns the offset of
// each record's first chunk.
func WriteLog(t testing.TB, path string, recs [][]byte) []int64 {
	t.Helper()
	b, offs := LogBytes(t, recs, leveldb.WriterOptions{})
	WriteFile(t, path, b)
	return offs
}

// AppendLog appends recs to the leveldb log at path through the codec's
// writer.
func AppendLog(t testing.TB, path string, recs ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	w := leveldb.NewWriter(f, leveldb.WriterOptions{Offset: fi.Size()})
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// RIOBytes returns items written as a recordio file by the codec's writer,
// with trailer as its trailer when it is not nil (o.Trailer must be set
// then).
func RIOBytes(t testing.TB, items [][]byte, o recordio.WriterOptions, trailer []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := recordio.NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := w.Append(it); err != nil {
			t.Fatal(err)
		}
	}
	if trailer != nil {
		if err := w.SetTrailer(trailer); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WriteRIO writes items as a recordio file at path.
func WriteRIO(t testing.TB, path string, items [][]byte, o recordio.WriterOptions) {
	t.Helper()
	WriteFile(t, path, RIOBytes(t, items, o, nil))
}

// WriteFile writes b at path (mode 0644).
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
