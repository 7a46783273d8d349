// Package recfile writes record files for tests, through the codec's own
// writers: leveldb logs and recordio files, as bytes or at a path. It is
// the half of codectest that imports the format packages, so that their
// in-package tests can use codectest itself.
package recfile

import (
	"bytes"
	"os"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
)

// LogBytes returns recs written as a leveldb log by the codec's writer,
// with the offset of each record's first chunk.
func LogBytes(t testing.TB, recs [][]byte, o leveldb.WriterOptions) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, o)
	offs := writeAll(t, recs, w.WriteRecord, nil, w.Close)
	return buf.Bytes(), offs
}

// writeAll writes recs through write, then the trailer through setTrailer
// when it is not nil, then closes; it returns what write returned for each
// record and fails t on any error.
func writeAll(t testing.TB, recs [][]byte, write func([]byte) (int64, error), setTrailer func() error, close func() error) []int64 {
	t.Helper()
	offs := make([]int64, len(recs))
	var err error
	for i := 0; i < len(recs) && err == nil; i++ {
		offs[i], err = write(recs[i])
	}
	if err == nil && setTrailer != nil {
		err = setTrailer()
	}
	if err == nil {
		err = close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return offs
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
	writeAll(t, recs, w.WriteRecord, nil, w.Close)
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
	var setTrailer func() error
	if trailer != nil {
		setTrailer = func() error { return w.SetTrailer(trailer) }
	}
	appendItem := func(it []byte) (int64, error) { _, err := w.Append(it); return 0, err }
	writeAll(t, items, appendItem, setTrailer, w.Close)
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

// LogWriter is a codectest.LogWriter through the codec's leveldb writer.
func LogWriter(t testing.TB, recs [][]byte, appEngine bool) []byte {
	t.Helper()
	b, _ := LogBytes(t, recs, leveldb.WriterOptions{AppEngine: appEngine})
	return b
}

// Vector is codectest.Vector with the codec's leveldb writer.
func Vector(t testing.TB, rel string) string {
	t.Helper()
	return codectest.Vector(t, rel, LogWriter)
}

// Vectors is codectest.Vectors with the codec's leveldb writer.
func Vectors(t testing.TB, pattern string) []string {
	t.Helper()
	return codectest.Vectors(t, pattern, LogWriter)
}
