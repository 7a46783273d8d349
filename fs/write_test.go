package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

// newWritableTree creates an empty record file of format f and returns the
// writable tree of it.
func newWritableTree(t testing.TB, f codec.Format, o Options) (*Tree, string) {
	t.Helper()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "w.log")
	tb, err := index.Create(ctx, p, f, f == codec.RecordIO, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	o.ReadWrite = true
	o.Logger = codectest.QuietLogger()
	tr, err := NewFile(p, tb, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, p
}

// readBack opens path afresh and returns its records.
func readBack(t testing.TB, path string) [][]byte {
	t.Helper()
	tb, err := index.Open(context.Background(), path, index.Options{CacheDir: "-", Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var out [][]byte
	for i := int64(0); i < tb.Len(); i++ {
		b := make([]byte, tb.Size(i))
		if _, err := tb.ReadAt(i, b, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// writeFile models cp: create, write in chunks, flush, close.
func writeFile(t testing.TB, tr *Tree, name string, data []byte, chunk int) int64 {
	t.Helper()
	ctx := context.Background()
	_, h, err := tr.Create(ctx, tr.Root(), name)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		if n, err := h.WriteAt(data[off:end], int64(off)); err != nil || n != end-off {
			t.Fatalf("WriteAt %d: %d, %v", off, n, err)
		}
	}
	rec, err := h.Flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestCreateAppends(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: spills past MemLimit
	for _, f := range []codec.Format{codec.LevelDB, codec.RecordIO} {
		t.Run(f.String(), func(t *testing.T) {
			tr, path := newWritableTree(t, f, Options{MemLimit: 1 << 20, TempDir: t.TempDir()})
			want := [][]byte{[]byte("hello\n"), {}, big, []byte("last")}
			for i, w := range want {
				rec := writeFile(t, tr, fmt.Sprintf("new%d.txt", i), w, 4096)
				if len(w) == 0 {
					// Never written: appended at release, not at flush.
					if rec != -1 {
						t.Errorf("empty file flushed as record %d", rec)
					}
				} else if rec != int64(i) {
					t.Errorf("record %d appended as %d", i, rec)
				}
			}
			got := readBack(t, path)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("record %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
				}
			}
			// The tree lists them too, and the created names are gone.
			n, err := tr.Lookup(context.Background(), tr.Root(), "3")
			if err != nil {
				t.Fatal(err)
			}
			a, err := tr.Getattr(context.Background(), n)
			if err != nil || a.Size != int64(len(want[3])) {
				t.Errorf("record 3: %+v, %v", a, err)
			}
			if _, err := tr.Lookup(context.Background(), tr.Root(), "new0.txt"); !errors.Is(err, iofs.ErrNotExist) {
				t.Errorf("created name after release: %v", err)
			}
		})
	}
}

func TestPendingFile(t *testing.T) {
	ctx := context.Background()
	tr, path := newWritableTree(t, codec.LevelDB, Options{})
	n, h, err := tr.Create(ctx, tr.Root(), "edit.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Writes at any offset, a gap reads as zeros, truncate shrinks.
	if _, err := h.WriteAt([]byte("world"), 6); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Truncate(ctx, n, 8); err != nil {
		t.Fatal(err)
	}
	want := []byte("hello\x00wo")
	buf := make([]byte, 32)
	if k, _ := h.ReadAt(buf, 0); !bytes.Equal(buf[:k], want) {
		t.Errorf("pending content %q, want %q", buf[:k], want)
	}
	// Visible under its name while open, with its size.
	c, err := tr.Lookup(ctx, tr.Root(), "edit.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := tr.Getattr(ctx, c); err != nil || a.Size != 8 || a.Mode != syscall.S_IFREG|0o644 {
		t.Errorf("pending attr %+v, %v", a, err)
	}
	d, err := tr.OpenDir(ctx, tr.Root())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		names = append(names, e.Name)
	}
	if fmt.Sprint(names) != "[.recfs]" { // pending files are not listed
		t.Errorf("listing %v", names)
	}
	// A read-only open sees the content; its flush appends nothing.
	rh, err := tr.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := rh.ReadAt(buf, 0); !bytes.Equal(buf[:k], want) {
		t.Errorf("read-only view %q", buf[:k])
	}
	if wh, ok := rh.(*WriteHandle); !ok {
		t.Errorf("read-only handle %T", rh)
	} else if rec, err := wh.Flush(ctx); rec != -1 || err != nil {
		t.Errorf("read-only flush: %d, %v", rec, err)
	} else if _, err := wh.WriteAt([]byte("x"), 0); Errno(err) != syscall.EBADF {
		t.Errorf("write through read-only handle: %v", err)
	}
	rh.Close()
	// Nothing reaches the file before the flush.
	if got := readBack(t, path); len(got) != 0 {
		t.Errorf("%d records before flush", len(got))
	}
	rec, err := h.Fsync(ctx)
	if err != nil || rec != 0 {
		t.Fatalf("Fsync: %d, %v", rec, err)
	}
	// Reads after the append come from the record.
	if k, _ := h.ReadAt(buf, 0); !bytes.Equal(buf[:k], want) {
		t.Errorf("read after append %q, want %q", buf[:k], want)
	}
	// Sealed: a second flush appends nothing, writes fail with EIO.
	if rec, err := h.Flush(ctx); err != nil || rec != -1 {
		t.Errorf("second flush: %d, %v", rec, err)
	}
	if _, err := h.WriteAt([]byte("x"), 0); Errno(err) != syscall.EIO {
		t.Errorf("write after append: %v", err)
	}
	// Still visible by name until the handle is released.
	if _, err := tr.Lookup(ctx, tr.Root(), "edit.txt"); err != nil {
		t.Errorf("name before release: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Getattr(ctx, c); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("stale pending node: %v", err)
	}
	got := readBack(t, path)
	if len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Errorf("records %q", got)
	}
}

// Shells open a file, dup it and close the original (a FLUSH) before they
// write: that flush must not append.
func TestFlushBeforeWrite(t *testing.T) {
	ctx := context.Background()
	tr, path := newWritableTree(t, codec.LevelDB, Options{})
	_, h, err := tr.Create(ctx, tr.Root(), "sh")
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := h.Flush(ctx); rec != -1 || err != nil {
		t.Fatalf("flush before write: %d, %v", rec, err)
	}
	if _, err := h.WriteAt([]byte("echo\n"), 0); err != nil {
		t.Fatal(err)
	}
	if rec, err := h.Flush(ctx); rec != 0 || err != nil {
		t.Fatalf("flush after write: %d, %v", rec, err)
	}
	h.Close()
	if got := readBack(t, path); len(got) != 1 || string(got[0]) != "echo\n" {
		t.Errorf("records %q", got)
	}
}

func TestWriteRefused(t *testing.T) {
	ctx := context.Background()
	src := &fakeRecords{recs: records(3)}
	ro, _ := newFileTree(t, src)
	rw, _ := newWritableTree(t, codec.LevelDB, Options{})
	writeFile(t, rw, "a", []byte("a"), 1)
	rec := func(tr *Tree) Node {
		n, err := tr.Lookup(ctx, tr.Root(), "0")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	info := func(tr *Tree) Node {
		n, err := tr.Lookup(ctx, tr.Root(), InfoName)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name string
		tr   *Tree
		op   func(tr *Tree) error
		want syscall.Errno
	}{
		{"ro create", ro, func(tr *Tree) error { _, _, err := tr.Create(ctx, tr.Root(), "x"); return err }, syscall.EROFS},
		{"ro mkdir", ro, func(tr *Tree) error { _, err := tr.Mkdir(ctx, tr.Root(), "x"); return err }, syscall.EROFS},
		{"ro truncate record", ro, func(tr *Tree) error { return tr.Truncate(ctx, rec(tr), 0) }, syscall.EROFS},
		{"rw truncate record", rw, func(tr *Tree) error { return tr.Truncate(ctx, rec(tr), 0) }, syscall.EPERM},
		{"rw truncate info", rw, func(tr *Tree) error { return tr.Truncate(ctx, info(tr), 0) }, syscall.EPERM},
		{"rw open record for writing", rw, func(tr *Tree) error { _, err := tr.OpenWrite(ctx, rec(tr)); return err }, syscall.EPERM},
		{"rw create record name", rw, func(tr *Tree) error { _, _, err := tr.Create(ctx, tr.Root(), "000007"); return err }, syscall.EPERM},
		{"rw create .recfs", rw, func(tr *Tree) error { _, _, err := tr.Create(ctx, tr.Root(), InfoName); return err }, syscall.EPERM},
		{"rw mkdir in record dir", rw, func(tr *Tree) error { _, err := tr.Mkdir(ctx, tr.Root(), "x"); return err }, syscall.EPERM},
		{"rw create with slash", rw, func(tr *Tree) error { _, _, err := tr.Create(ctx, tr.Root(), "a/b"); return err }, syscall.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Errno(tc.op(tc.tr)); got != tc.want {
				t.Errorf("errno %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCreateTwiceAndTooLarge(t *testing.T) {
	ctx := context.Background()
	tr, path := newWritableTree(t, codec.LevelDB, Options{MaxRecord: 100})
	_, h, err := tr.Create(ctx, tr.Root(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Create(ctx, tr.Root(), "x"); Errno(err) != syscall.EEXIST {
		t.Errorf("second create: %v", err)
	}
	// A failed write poisons the file: nothing of it is ever appended.
	_, h2, err := tr.Create(ctx, tr.Root(), "y")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h2.WriteAt(make([]byte, 50), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.WriteAt(make([]byte, 51), 50); Errno(err) != syscall.EFBIG {
		t.Errorf("oversized write: %v", err)
	}
	if _, err := h2.Flush(ctx); Errno(err) != syscall.EFBIG {
		t.Errorf("flush after a failed write: %v", err)
	}
	h2.Close()
	_, h3, err := tr.Create(ctx, tr.Root(), "z")
	if err != nil {
		t.Fatal(err)
	}
	if err := h3.Truncate(1000); Errno(err) != syscall.EFBIG {
		t.Errorf("oversized truncate: %v", err)
	}
	h3.Close()
	if _, err := h.WriteAt(make([]byte, 100), 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil { // release without flush still appends
		t.Fatal(err)
	}
	if got := readBack(t, path); len(got) != 1 || len(got[0]) != 100 {
		t.Errorf("records %d", len(got))
	}
}

// A legacy recordio source cannot take appends: create fails with EROFS
// and nothing is written.
func TestAppendLegacyFails(t *testing.T) {
	ctx := context.Background()
	matches := codectest.Vectors(t, "grailbio/legacy-unpacked.grail-rio", nil)
	if len(matches) == 0 {
		t.Skip("no legacy recordio vector")
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(matches[0]))
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := index.Open(ctx, dst, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatalf("vector does not open: %v", err)
	}
	if tb.Format() != codec.RecordIOLegacy {
		tb.Close()
		t.Fatalf("%s is %v, want %v", dst, tb.Format(), codec.RecordIOLegacy)
	}
	tr, err := NewFile(dst, tb, Options{ReadWrite: true, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, _, err := tr.Create(ctx, tr.Root(), "x"); !errors.Is(err, index.ErrReadOnlyFormat) || Errno(err) != syscall.EROFS {
		t.Errorf("create in legacy: %v (%v)", err, Errno(err))
	}
	after, _ := os.ReadFile(dst)
	if !bytes.Equal(after, data) {
		t.Error("legacy file changed")
	}
}

func TestConcurrentWriters(t *testing.T) {
	tr, path := newWritableTree(t, codec.LevelDB, Options{})
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				writeFile(t, tr, fmt.Sprintf("w%d-%d", w, i), fmt.Appendf(nil, "writer %d record %d", w, i), 7)
			}
		}()
	}
	wg.Wait()
	got := readBack(t, path)
	if len(got) != writers*each {
		t.Fatalf("%d records, want %d", len(got), writers*each)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[string(r)] {
			t.Errorf("duplicate %q", r)
		}
		seen[string(r)] = true
	}
	for w := range writers {
		for i := range each {
			if !seen[fmt.Sprintf("writer %d record %d", w, i)] {
				t.Errorf("lost writer %d record %d", w, i)
			}
		}
	}
}

// TestMkdirTree: mkdir makes a new record file, durably (its directory is
// synced once, counted by the dirSyncs hook), that takes records; a second
// mkdir of the name fails. Not parallel: it sets the hook.
func TestMkdirTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var dirsSynced []string
	dirSyncs = func(d string) { dirsSynced = append(dirsSynced, d) }
	t.Cleanup(func() { dirSyncs = nil })
	tr, err := NewDir(dir, Options{
		Open: func(ctx context.Context, sf SourceFile) (Records, error) {
			return openSourceFile(ctx, sf, index.Options{CacheDir: "-", Writable: true})
		},
		Detect: func(r io.ReaderAt, size int64) bool { _, err := index.Detect(r, size); return err == nil },
		Create: func(ctx context.Context, sf SourceFile) (Records, error) {
			src, err := sf.Local()
			if err != nil {
				return nil, err
			}
			return index.CreateSource(ctx, src, codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
		},
		ReadWrite: true,
		Logger:    codectest.QuietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	n, err := tr.Mkdir(ctx, tr.Root(), "new.log")
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind != KindRecordDir {
		t.Fatalf("mkdir made %v", n.Kind)
	}
	if _, err := tr.Mkdir(ctx, tr.Root(), "new.log"); Errno(err) != syscall.EEXIST {
		t.Errorf("second mkdir: %v", err)
	}
	if len(dirsSynced) != 1 || dirsSynced[0] != dir {
		t.Errorf("mkdir synced the directories %q, want [%q]", dirsSynced, dir)
	}
	_, h, err := tr.Create(ctx, n, "r")
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt([]byte("first"), 0)
	if _, err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	// A fresh lookup keeps the same record directory and sees the record.
	n2, err := tr.Lookup(ctx, tr.Root(), "new.log")
	if err != nil || n2.Kind != KindRecordDir {
		t.Fatalf("lookup: %v %v", n2.Kind, err)
	}
	if _, err := tr.Lookup(ctx, n2, "0"); err != nil {
		t.Errorf("record 0: %v", err)
	}
	got := readBack(t, filepath.Join(dir, "new.log"))
	if len(got) != 1 || string(got[0]) != "first" {
		t.Errorf("records %q", got)
	}
}

// TestMkdirCreateFails: a failed Create makes mkdir fail and removes the
// file it created, unless the failure matches fs.ErrExist (another writer
// made the file theirs meanwhile): then mkdir fails with EEXIST and the
// file stays as that writer left it.
func TestMkdirCreateFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		err   error
		errno syscall.Errno
		kept  bool
	}{{fmt.Errorf("theirs: %w", iofs.ErrExist), syscall.EEXIST, true}, {fmt.Errorf("no room: %w", syscall.ENOSPC), syscall.ENOSPC, false}} {
		dir := t.TempDir()
		tr, err := NewDir(dir, Options{
			Open: func(ctx context.Context, sf SourceFile) (Records, error) {
				return openSourceFile(ctx, sf, index.Options{CacheDir: "-"})
			},
			Detect: func(r io.ReaderAt, size int64) bool { _, err := index.Detect(r, size); return err == nil },
			Create: func(ctx context.Context, sf SourceFile) (Records, error) {
				sf.File.WriteString("another writer's bytes")
				return nil, tc.err
			},
			ReadWrite: true,
			Logger:    codectest.QuietLogger(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Mkdir(ctx, tr.Root(), "new.log"); Errno(err) != tc.errno {
			t.Errorf("%v: mkdir: %v", tc.err, err)
		}
		_, err = os.Stat(filepath.Join(dir, "new.log"))
		if kept := err == nil; kept != tc.kept {
			t.Errorf("%v: file kept %v, want %v (%v)", tc.err, kept, tc.kept, err)
		}
		tr.Close()
	}
}

// An empty .log file is a record directory in a writable tree (mkdir makes
// them, and they must survive a remount), a plain file otherwise.
func TestEmptyLogWritable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"empty.log", "empty.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rw := range []bool{false, true} {
		tr, err := NewDir(dir, Options{
			Open: func(ctx context.Context, sf SourceFile) (Records, error) {
				return openSourceFile(ctx, sf, index.Options{CacheDir: "-", Writable: rw})
			},
			Detect:    func(r io.ReaderAt, size int64) bool { _, err := index.Detect(r, size); return err == nil },
			ReadWrite: rw,
			Logger:    codectest.QuietLogger(),
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, wantRec := range map[string]bool{"empty.log": rw, "empty.txt": false} {
			n, err := tr.Lookup(ctx, tr.Root(), name)
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Kind == KindRecordDir; got != wantRec {
				t.Errorf("rw=%v %s: kind %v", rw, name, n.Kind)
			}
		}
		tr.Close()
	}
}

func BenchmarkAppendThroughTree(b *testing.B) {
	tr, _ := newWritableTree(b, codec.LevelDB, Options{})
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 100)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, h, err := tr.Create(ctx, tr.Root(), fmt.Sprint("f", i))
		if err != nil {
			b.Fatal(err)
		}
		h.WriteAt(data, 0)
		if _, err := h.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
}

// appendingRecords is a fakeRecords that takes appends.
type appendingRecords struct{ *fakeRecords }

func (a appendingRecords) Append(_ context.Context, recs [][]byte, _ index.AppendOptions) (int64, error) {
	first := a.Len()
	for _, r := range recs {
		a.recs = append(a.recs, bytes.Clone(r))
	}
	return first, nil
}

// FuzzPendingWrites applies a sequence of writes and truncations (decoded
// from ops) to a created file, with a tiny memory limit so the content
// moves to a temporary file on the way, and checks that the one record
// appended on flush is exactly what a plain byte slice model holds.
func FuzzPendingWrites(f *testing.F) {
	f.Add([]byte{0, 5, 3, 'a', 'b', 'c', 1, 2, 0, 40, 2, 'x', 'y'})
	f.Add([]byte{1, 200, 0, 30, 1, 'z', 1, 3})
	f.Add([]byte{})
	// Shrink, then grow through a gap: the gap must read as zeros.
	f.Add([]byte{0, 0, 10, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 1, 0, 0, 1, 1, 'b'})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := context.Background()
		src := appendingRecords{&fakeRecords{}}
		tr, _ := newFileTree(t, src)
		tr.o.ReadWrite, tr.o.MemLimit, tr.o.MaxRecord, tr.o.TempDir = true, 16, 1<<12, t.TempDir()
		_, h, err := tr.Create(ctx, tr.Root(), "f")
		if err != nil {
			t.Fatal(err)
		}
		var model []byte
		for len(ops) >= 2 {
			op, arg := ops[0], int64(ops[1])*7
			ops = ops[2:]
			switch op % 2 {
			case 0: // write ops[0] bytes at arg
				n := 0
				if len(ops) > 0 {
					n = min(int(ops[0]), len(ops)-1)
					ops = ops[1:]
				}
				data := ops[:n]
				ops = ops[n:]
				if _, err := h.WriteAt(data, arg); err != nil {
					t.Fatal(err)
				}
				if end := int(arg) + n; end > len(model) {
					model = append(model, make([]byte, end-len(model))...)
				}
				copy(model[arg:], data)
			case 1: // truncate to arg
				if err := h.Truncate(arg); err != nil {
					t.Fatal(err)
				}
				if int(arg) <= len(model) {
					model = model[:arg]
				} else {
					model = append(model, make([]byte, int(arg)-len(model))...)
				}
			}
			if h.Size() != int64(len(model)) {
				t.Fatalf("size %d, model %d", h.Size(), len(model))
			}
		}
		buf := make([]byte, len(model)+1)
		if n, _ := h.ReadAt(buf, 0); !bytes.Equal(buf[:n], model) {
			t.Fatalf("pending content differs from the model")
		}
		if _, err := h.Fsync(ctx); err != nil {
			t.Fatal(err)
		}
		h.Close()
		if len(src.recs) != 1 || !bytes.Equal(src.recs[0], model) {
			t.Fatalf("%d records; want exactly the model (%d bytes)", len(src.recs), len(model))
		}
	})
}
