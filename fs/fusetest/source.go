package fusetest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// Payload returns record i of the suite's sources: a few bytes to a few
// hundred, with every 97th of the first thousand long enough (40 KB) to
// take several read requests of any adapter.
func Payload(i int64) []byte {
	n := (i * 37) % 300
	if i%97 == 96 && i < 1000 {
		n = 40000 + i
	}
	b := make([]byte, n)
	for j := range b {
		b[j] = byte('a' + (i+int64(j))%26)
	}
	return b
}

// BadOffset is the file offset a corrupt record of a MemSource reports.
const BadOffset = 1234

// MemSource is in-memory fs.Records (and fs.Appender) for node tests:
// record i is Payload(i) until records are appended. Its methods are safe
// for concurrent use.
type MemSource struct {
	mu      sync.Mutex
	recs    [][]byte
	bad     int64  // record whose reads fail as a damaged chunk would, or -1
	trailer []byte // nil: none
}

var (
	_ fs.Records  = (*MemSource)(nil)
	_ fs.Appender = (*MemSource)(nil)
)

// NewMemSource returns a source of n records whose record bad (-1: none)
// fails to read, with the given trailer (nil: none).
func NewMemSource(n, bad int64, trailer []byte) *MemSource {
	m := &MemSource{bad: bad, trailer: trailer}
	for i := range n {
		m.recs = append(m.recs, Payload(i))
	}
	return m
}

// Record returns the bytes of record n.
func (m *MemSource) Record(n int64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs[n]
}

// Len returns the number of records.
func (m *MemSource) Len() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.recs))
}

// Size returns the length of record n.
func (m *MemSource) Size(n int64) int64 { return int64(len(m.Record(n))) }

// Offset returns a made-up file offset of record n: 100 bytes a record.
func (m *MemSource) Offset(n int64) int64 { return 100 * n }

// ReadAt reads record n; the bad record fails with a *codec.CorruptError
// at BadOffset.
func (m *MemSource) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n < 0 || n >= m.Len() {
		return 0, index.ErrRange
	}
	if n == m.bad {
		return 0, &codec.CorruptError{Off: BadOffset, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	}
	return readAt(m.Record(n), p, off)
}

// HasTrailer reports whether the source has a trailer.
func (m *MemSource) HasTrailer() bool { return m.trailer != nil }

// TrailerSize returns the trailer's length.
func (m *MemSource) TrailerSize() int64 { return int64(len(m.trailer)) }

// ReadTrailerAt reads the trailer.
func (m *MemSource) ReadTrailerAt(p []byte, off int64) (int, error) { return readAt(m.trailer, p, off) }

// Header returns no entries.
func (m *MemSource) Header() []index.HeaderEntry { return nil }

// Damage returns no ranges.
func (m *MemSource) Damage() []codec.Damage { return nil }

// Info summarises the source.
func (m *MemSource) Info() index.Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	for _, r := range m.recs {
		total += int64(len(r))
	}
	tr := int64(-1)
	if m.trailer != nil {
		tr = int64(len(m.trailer))
	}
	return index.Info{Flavor: "memory", Records: int64(len(m.recs)), Bytes: total, Loaded: "built", Trailer: tr}
}

// Close does nothing.
func (m *MemSource) Close() error { return nil }

// Append adds recs at the end.
func (m *MemSource) Append(_ context.Context, recs [][]byte, _ index.AppendOptions) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	first := int64(len(m.recs))
	for _, r := range recs {
		m.recs = append(m.recs, bytes.Clone(r))
	}
	return first, nil
}

func readAt(b, p []byte, off int64) (int, error) { return bytes.NewReader(b).ReadAt(p, off) }

// FileTree returns the tree of one record file served from src (an empty
// file stands in for it on disk), closed when the test ends.
func FileTree(t testing.TB, src fs.Records, o fs.Options) *fs.Tree {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src.log")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = codectest.QuietLogger()
	}
	tr, err := fs.NewFile(p, src, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// FakeMagic starts a file of the suite's fake record format: after it,
// one record per line.
const FakeMagic = "FAKEREC\n"

// FakeDetect tells files of the fake record format from others.
func FakeDetect(r io.ReaderAt, size int64) bool {
	var b [len(FakeMagic)]byte
	n, _ := r.ReadAt(b[:], 0)
	return string(b[:n]) == FakeMagic
}

// FakeOpen reads a file of the fake record format into a MemSource.
func FakeOpen(_ context.Context, sf fs.SourceFile) (fs.Records, error) {
	data, err := io.ReadAll(sf.File)
	sf.File.Close()
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte(FakeMagic)) {
		return nil, codec.ErrFormat
	}
	m := &MemSource{bad: -1}
	sc := bufio.NewScanner(strings.NewReader(string(data[len(FakeMagic):])))
	for sc.Scan() {
		m.recs = append(m.recs, []byte(sc.Text()))
	}
	return m, nil
}

// WriteFiles writes files (slash-separated path → content) below dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FakeLog returns the content of a fake record file of the given records.
func FakeLog(recs ...string) string {
	return FakeMagic + strings.Join(recs, "\n") + "\n"
}

// DirTree returns the tree of the directory dir, whose record files are
// in the fake format, closed when the test ends.
func DirTree(t testing.TB, dir string, o fs.Options) *fs.Tree {
	t.Helper()
	o.Open, o.Detect = FakeOpen, FakeDetect
	if o.Logger == nil {
		o.Logger = codectest.QuietLogger()
	}
	tr, err := fs.NewDir(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}
