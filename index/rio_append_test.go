package index

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"io/fs"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/recordio"
)

var errCrash = errors.New("simulated crash")

// memFS is an in-memory appendFS that "crashes" after a budget of written
// bytes or of operations: the failing write is applied partially, and every
// later operation fails. What was written before the crash stays, in order
// (the prefix model of a crash).
type memFS struct {
	files     map[string][]byte
	bytesLeft int // < 0: unlimited
	opsLeft   int // < 0: unlimited
	crashed   bool
	bytes     int // bytes written so far
	ops       int // operations so far
}

func newMemFS() *memFS { return &memFS{files: map[string][]byte{}, bytesLeft: -1, opsLeft: -1} }

func (m *memFS) step() error {
	if m.crashed {
		return errCrash
	}
	if m.opsLeft == 0 {
		m.crashed = true
		return errCrash
	}
	if m.opsLeft > 0 {
		m.opsLeft--
	}
	m.ops++
	return nil
}

type memFile struct {
	m    *memFS
	name string
}

func (m *memFS) OpenFile(name string, flag int, _ fs.FileMode) (appendFile, error) {
	if err := m.step(); err != nil {
		return nil, err
	}
	if _, ok := m.files[name]; !ok {
		if flag&os.O_CREATE == 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		m.files[name] = nil
	}
	if flag&os.O_TRUNC != 0 {
		m.files[name] = nil
	}
	return &memFile{m: m, name: name}, nil
}

func (m *memFS) ReadFile(name string) ([]byte, error) {
	b, ok := m.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(b), nil
}

func (m *memFS) ReadJournal(name string, _ appendFile) ([]byte, error) { return m.ReadFile(name) }

func (m *memFS) CreateJournal(name string) (appendFile, error) {
	if err := m.step(); err != nil {
		return nil, err
	}
	if _, ok := m.files[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	m.files[name] = nil
	return &memFile{m: m, name: name}, nil
}

func (m *memFS) Remove(name string) error {
	if err := m.step(); err != nil {
		return err
	}
	delete(m.files, name)
	return nil
}

func (m *memFS) SyncDir(string) error { return m.step() }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(f.m.files[f.name]).ReadAt(p, off)
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.m.step(); err != nil {
		return 0, err
	}
	n := len(p)
	if f.m.bytesLeft >= 0 && n > f.m.bytesLeft {
		n = f.m.bytesLeft
	}
	b := f.m.files[f.name]
	if need := off + int64(n); need > int64(len(b)) {
		b = append(b, make([]byte, need-int64(len(b)))...)
	}
	copy(b[off:], p[:n])
	f.m.files[f.name] = b
	f.m.bytes += n
	if f.m.bytesLeft >= 0 {
		f.m.bytesLeft -= n
	}
	if n < len(p) {
		f.m.crashed = true
		return n, errCrash
	}
	return n, nil
}

func (f *memFile) Truncate(size int64) error {
	if err := f.m.step(); err != nil {
		return err
	}
	b := f.m.files[f.name]
	if size <= int64(len(b)) {
		f.m.files[f.name] = b[:size]
	} else {
		f.m.files[f.name] = append(b, make([]byte, size-int64(len(b)))...)
	}
	return nil
}

func (f *memFile) Sync() error          { return f.m.step() }
func (f *memFile) Close() error         { return nil }
func (f *memFile) Lock() error          { return nil }
func (f *memFile) Size() (int64, error) { return int64(len(f.m.files[f.name])), nil }
func (m *memFS) clone() *memFS {
	c := newMemFS()
	for k, v := range m.files {
		c.files[k] = slices.Clone(v)
	}
	return c
}

type appendCase struct {
	name    string
	wo      recordio.WriterOptions
	trailer []byte
}

var appendCases = []appendCase{
	{name: "no-trailer", wo: recordio.WriterOptions{MaxItems: 3}},
	{name: "trailer", wo: recordio.WriterOptions{MaxItems: 3, Trailer: true}, trailer: bytes.Repeat([]byte("T"), 40000)},
	{name: "trailer-zstd", wo: recordio.WriterOptions{Transformers: []string{"zstd"}, Trailer: true}, trailer: []byte{}},
	{name: "header-only", wo: recordio.WriterOptions{}},
	{name: "trailer-only", wo: recordio.WriterOptions{Trailer: true}, trailer: []byte{}},
}

func TestRecordIOAppend(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range appendCases {
		t.Run(c.name, func(t *testing.T) {
			var base [][]byte
			if c.name != "header-only" && c.name != "trailer-only" {
				base = codectest.GenItems(rng, 5, codectest.RIOMaxChunkPayload)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "f.rio")
			if err := os.WriteFile(path, recfile.RIOBytes(t, base, c.wo, c.trailer), 0o644); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(base)
			for round := 0; round < 3; round++ {
				a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{MaxItems: 1})
				if err != nil {
					t.Fatal(err)
				}
				batch := codectest.GenItems(rng, 1+round*2, codectest.RIOMaxChunkPayload)
				if err := a.Append(batch...); err != nil {
					t.Fatal(err)
				}
				if err := a.Append(); err != nil {
					t.Fatal(err)
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				want = append(want, batch...)
				data, _ := os.ReadFile(path)
				got, tr := rioScanAll(t, data)
				if !equalItems(got, want) {
					t.Fatalf("round %d: %d items, want %d", round, len(got), len(want))
				}
				if !bytes.Equal(tr, c.trailer) || (tr == nil) != (c.trailer == nil) {
					t.Fatalf("round %d: trailer %d bytes, want %d", round, len(tr), len(c.trailer))
				}
				if _, err := os.Stat(path + RecordIOJournalSuffix); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("journal left behind: %v", err)
				}
			}
		})
	}
}

// TestRecordIOAppendCrash crashes appends after every operation and after
// many byte counts, repairs, and checks that no item of a returned Append is
// lost, that only whole items of the interrupted Append may appear, and that
// the trailer survives.
func TestRecordIOAppendCrash(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, c := range appendCases {
		t.Run(c.name, func(t *testing.T) {
			base := codectest.GenItems(rng, 4, codectest.RIOMaxChunkPayload)
			const path = "/d/f.rio"
			orig := newMemFS()
			orig.files[path] = recfile.RIOBytes(t, base, c.wo, c.trailer)
			batches := [][][]byte{codectest.GenItems(rng, 2, codectest.RIOMaxChunkPayload), codectest.GenItems(rng, 5, codectest.RIOMaxChunkPayload), codectest.GenItems(rng, 1, codectest.RIOMaxChunkPayload)}

			run := func(m *memFS, bytesBudget, opsBudget int) int {
				a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{MaxItems: 1, fsys: m})
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				m.bytes, m.ops = 0, 0
				m.bytesLeft, m.opsLeft = bytesBudget, opsBudget
				done := 0
				for _, b := range batches {
					if a.Append(b...) != nil {
						break
					}
					done++
				}
				a.Close()
				return done
			}
			// A crash-free run measures the work.
			free := orig.clone()
			if run(free, -1, -1) != len(batches) {
				t.Fatal("crash-free run failed")
			}
			totalBytes, totalOps := free.bytes, free.ops
			type crash struct{ bytes, ops int }
			var crashes []crash
			for k := 0; k <= totalOps; k++ {
				crashes = append(crashes, crash{-1, k})
			}
			stride := 3000
			if testing.Short() {
				stride = 30000
			}
			for n := 0; n <= totalBytes; n += 1 + rng.Intn(stride) {
				crashes = append(crashes, crash{n, -1})
			}
			for n := 0; n <= totalBytes; n += rioChunk {
				for _, d := range []int{-1, 1, codectest.RIOChunkHeader, codectest.RIOChunkHeader + 1} {
					if n+d >= 0 && n+d <= totalBytes {
						crashes = append(crashes, crash{n + d, -1})
					}
				}
			}
			for _, cr := range crashes {
				m := orig.clone()
				done := run(m, cr.bytes, cr.ops)
				// Reboot: no more crashes.
				m.crashed, m.bytesLeft, m.opsLeft = false, -1, -1
				if _, err := repairPath(m, path, tailPolicy{}); err != nil {
					t.Fatalf("crash %+v: repair: %v", cr, err)
				}
				if _, ok := m.files[path+RecordIOJournalSuffix]; ok {
					t.Fatalf("crash %+v: journal left after repair", cr)
				}
				data := m.files[path]
				if len(data)%rioChunk != 0 {
					t.Fatalf("crash %+v: repaired size %d is not whole chunks", cr, len(data))
				}
				got, tr := rioScanAll(t, data)
				want := slices.Clone(base)
				for _, b := range batches[:done] {
					want = append(want, b...)
				}
				if len(got) < len(want) || !equalItems(got[:len(want)], want) {
					t.Fatalf("crash %+v (%d appends returned): lost items: got %d, want at least %d", cr, done, len(got), len(want))
				}
				if extra := got[len(want):]; len(extra) > 0 {
					if done == len(batches) || len(extra) > len(batches[done]) || !equalItems(extra, batches[done][:len(extra)]) {
						t.Fatalf("crash %+v: %d unexpected items", cr, len(extra))
					}
				}
				if !bytes.Equal(tr, c.trailer) || (tr == nil) != (c.trailer == nil) {
					t.Fatalf("crash %+v: trailer lost or changed (%d bytes, want %d)", cr, len(tr), len(c.trailer))
				}
				// The repaired file accepts further appends.
				more := [][]byte{[]byte("after")}
				a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{fsys: m})
				if err != nil {
					t.Fatalf("crash %+v: reopen: %v", cr, err)
				}
				if err := a.Append(more...); err != nil {
					t.Fatal(err)
				}
				got2, _ := rioScanAll(t, m.files[path])
				if !equalItems(got2, append(slices.Clone(got), more...)) {
					t.Fatalf("crash %+v: append after repair lost items", cr)
				}
			}
			t.Logf("%d crash points over %d bytes and %d operations", len(crashes), totalBytes, totalOps)
		})
	}
}

func TestRepairRecordIOJournal(t *testing.T) {
	// A torn journal is deleted without touching the file.
	data := recfile.RIOBytes(t, [][]byte{[]byte("a")}, recordio.WriterOptions{Trailer: true}, []byte("tr"))
	j := encodeJournal(int64(len(data)), int64(len(data))-rioChunk, data[len(data)-rioChunk:])
	for _, cut := range []int{0, 7, 8, 33, len(j) - 1} {
		m := newMemFS()
		m.files["/f"] = slices.Clone(data)
		m.files["/f"+RecordIOJournalSuffix] = j[:cut]
		if ok, err := repairPath(m, "/f", tailPolicy{}); err != nil || !ok {
			t.Fatalf("cut %d: repaired=%v err=%v", cut, ok, err)
		}
		if !bytes.Equal(m.files["/f"], data) {
			t.Fatalf("cut %d: file changed", cut)
		}
		if _, ok := m.files["/f"+RecordIOJournalSuffix]; ok {
			t.Fatalf("cut %d: journal kept", cut)
		}
	}
	// A clean file needs no repair.
	m := newMemFS()
	m.files["/f"] = slices.Clone(data)
	if ok, err := repairPath(m, "/f", tailPolicy{}); err != nil || ok {
		t.Fatalf("clean file: repaired=%v err=%v", ok, err)
	}
	// Garbage after the last block is no torn block: it stays, and the
	// error says where it starts; forced, it is saved and cut off.
	garbage := append(slices.Clone(data[:len(data)-rioChunk]), 1, 2, 3)
	m.files["/f"] = slices.Clone(garbage)
	var te *TailError
	if ok, err := repairPath(m, "/f", tailPolicy{}); !errors.As(err, &te) || ok || !bytes.Equal(m.files["/f"], garbage) {
		t.Fatalf("tail garbage: repaired=%v err=%v size %d", ok, err, len(m.files["/f"]))
	}
	if te.Off != int64(len(data)-rioChunk) || te.Len != 3 {
		t.Fatalf("tail garbage: error names %d bytes at %d", te.Len, te.Off)
	}
	var moved []MovedTail
	p := tailPolicy{cacheDir: t.TempDir(), force: true, told: func(mt MovedTail) { moved = append(moved, mt) }}
	if ok, err := repairPath(m, "/f", p); err != nil || !ok || len(m.files["/f"]) != len(data)-rioChunk {
		t.Fatalf("forced: repaired=%v err=%v size %d", ok, err, len(m.files["/f"]))
	}
	if len(moved) != 1 || moved[0].Reason != MovedForced || moved[0].Len != 3 {
		t.Fatalf("forced: told %+v", moved)
	}
	if b, err := os.ReadFile(moved[0].SavedTo); err != nil || !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Fatalf("forced: saved %q, %v", b, err)
	}
}

// TestRecordIOAppendFrom: items appended from streams read back, with and
// without transformers and trailers; a short input leaves the file
// byte-identical.
func TestRecordIOAppendFrom(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	cases := append(slices.Clone(appendCases),
		appendCase{name: "flate", wo: recordio.WriterOptions{Transformers: []string{"flate"}}},
		appendCase{name: "zstd-flate-trailer", wo: recordio.WriterOptions{Transformers: []string{"zstd", "flate"}, Trailer: true}, trailer: []byte("t")})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := codectest.GenItems(rng, 3, codectest.RIOMaxChunkPayload)
			path := filepath.Join(t.TempDir(), "f.rio")
			if err := os.WriteFile(path, recfile.RIOBytes(t, base, c.wo, c.trailer), 0o644); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(base)
			var batch []recordio.ItemSource
			for _, n := range []int{0, 1, codectest.RIOMaxChunkPayload - 2, codectest.RIOMaxChunkPayload - 1, 200000} {
				it := make([]byte, n)
				rng.Read(it[:n/2]) // half random, half zeros
				want = append(want, it)
				batch = append(batch, recordio.ItemSource{R: bytes.NewReader(it), Size: int64(n)})
			}
			a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.AppendFrom(batch...); err != nil {
				t.Fatal(err)
			}
			a.Close()
			before, _ := os.ReadFile(path)
			got, tr := rioScanAll(t, before)
			if !equalItems(got, want) {
				t.Fatalf("%d items read back, want %d (or bytes differ)", len(got), len(want))
			}
			if !bytes.Equal(tr, c.trailer) {
				t.Fatalf("trailer %q, want %q", tr, c.trailer)
			}
			// An input that ends early: nothing changes.
			a, err = OpenRecordIOAppender(path, RecordIOAppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = a.AppendFrom(recordio.ItemSource{R: bytes.NewReader([]byte("ok")), Size: 2},
				recordio.ItemSource{R: bytes.NewReader(make([]byte, 70000)), Size: 70001})
			a.Close()
			if !errors.Is(err, codec.ErrShortInput) {
				t.Fatalf("short input: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatalf("file changed by a failed append (%d -> %d bytes)", len(before), len(after))
			}
			if _, err := os.Stat(path + RecordIOJournalSuffix); err == nil {
				t.Fatal("journal left behind")
			}
		})
	}
}

// TestRecordIOAppendFromTooBig: an item whose compressed block would decode
// past what readers accept is refused before anything is read or written.
func TestRecordIOAppendFromTooBig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "z.rio")
	if err := os.WriteFile(path, recfile.RIOBytes(t, nil, recordio.WriterOptions{Transformers: []string{"zstd"}}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	never := readerFunc(func([]byte) (int, error) { t.Fatal("input read"); return 0, nil })
	if err := a.AppendFrom(recordio.ItemSource{R: never, Size: recordio.DefaultMaxBlockSize}); !errors.Is(err, codec.ErrLimit) {
		t.Fatalf("AppendFrom of %d bytes into a zstd file: %v, want ErrLimit", recordio.DefaultMaxBlockSize, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("file changed")
	}
}

// readerFunc adapts a function to io.Reader.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
