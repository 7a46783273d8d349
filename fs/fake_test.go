package fs

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

// fakeRecords is in-memory Records for tests.
type fakeRecords struct {
	recs    [][]byte
	trailer []byte // nil: no trailer
	header  []index.HeaderEntry
	damage  []codec.Damage
	bad     map[int64]error // records whose reads fail
	closed  bool
}

func (f *fakeRecords) Len() int64           { return int64(len(f.recs)) }
func (f *fakeRecords) Size(n int64) int64   { return int64(len(f.recs[n])) }
func (f *fakeRecords) Offset(n int64) int64 { return 1000 + n }
func (f *fakeRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n < 0 || n >= f.Len() {
		return 0, index.ErrRange
	}
	if err := f.bad[n]; err != nil {
		return 0, err
	}
	return readAt(f.recs[n], p, off)
}
func (f *fakeRecords) HasTrailer() bool   { return f.trailer != nil }
func (f *fakeRecords) TrailerSize() int64 { return int64(len(f.trailer)) }
func (f *fakeRecords) ReadTrailerAt(p []byte, off int64) (int, error) {
	return readAt(f.trailer, p, off)
}
func (f *fakeRecords) Header() []index.HeaderEntry { return f.header }
func (f *fakeRecords) Damage() []codec.Damage      { return f.damage }
func (f *fakeRecords) Close() error                { f.closed = true; return nil }
func (f *fakeRecords) Info() index.Info {
	var total int64
	for _, r := range f.recs {
		total += int64(len(r))
	}
	tr := int64(-1)
	if f.trailer != nil {
		tr = int64(len(f.trailer))
	}
	return index.Info{Format: codec.LevelDB, Flavor: "fake", Records: f.Len(), Bytes: total, Loaded: "built", Trailer: tr}
}

func readAt(b, p []byte, off int64) (int, error) { return bytes.NewReader(b).ReadAt(p, off) }

// A fake record file on disk is "FAKEREC\n" followed by one record per line.
const fakeMagic = "FAKEREC\n"

func fakeDetect(r io.ReaderAt, size int64) bool {
	var b [len(fakeMagic)]byte
	n, _ := r.ReadAt(b[:], 0)
	return string(b[:n]) == fakeMagic
}

// fakeOpener opens fake record files and counts the opens.
type fakeOpener struct {
	opens int
	srcs  []*fakeRecords // every source opened
}

// newFakeDirTree writes files in a temporary folder and returns a directory
// tree of it whose record files are fake ones opened through the returned
// opener, and the folder; the tree is closed when the test ends.
func newFakeDirTree(t *testing.T, files map[string]string) (*Tree, *fakeOpener, string) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	tr, op := newFakeTreeOf(t, dir)
	return tr, op, dir
}

// newFakeTreeOf returns a directory tree of dir whose record files are fake
// ones opened through the returned opener; the tree is closed when the test
// ends.
func newFakeTreeOf(t *testing.T, dir string) (*Tree, *fakeOpener) {
	t.Helper()
	op := &fakeOpener{}
	tr, err := NewDir(dir, Options{Open: op.open, Detect: fakeDetect, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, op
}

func (o *fakeOpener) open(_ context.Context, sf SourceFile) (Records, error) {
	o.opens++
	data, err := io.ReadAll(sf.File)
	sf.File.Close()
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte(fakeMagic)) {
		return nil, codec.ErrFormat
	}
	src := &fakeRecords{}
	sc := bufio.NewScanner(strings.NewReader(string(data[len(fakeMagic):])))
	for sc.Scan() {
		src.recs = append(src.recs, []byte(sc.Text()))
	}
	o.srcs = append(o.srcs, src)
	return src, nil
}
