//go:build linux

package fs

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

// forEachResolver runs f with openat2 and with the O_NOFOLLOW walk that
// replaces it on kernels without openat2.
func forEachResolver(t *testing.T, f func(t *testing.T)) {
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			old := noOpenat2.Load()
			noOpenat2.Store(walk)
			defer noOpenat2.Store(old)
			f(t)
		})
	}
}

// swapFixture is a tree (src) and, outside it, a directory holding a
// secret plain file and a secret record file.
func swapFixture(t *testing.T) (src, outside string) {
	t.Helper()
	base := t.TempDir()
	src, outside = filepath.Join(base, "src"), filepath.Join(base, "outside")
	writeTree(t, src, map[string]string{
		"sub/file.txt": "plain\n",
		"sub/a.log":    fakeMagic + "mine\n",
		"other.txt":    "other\n",
	})
	writeTree(t, outside, map[string]string{
		"file.txt": "SECRET\n",
		"a.log":    fakeMagic + "SECRET\n",
	})
	return src, outside
}

// swap replaces path with a symbolic link to target.
func swap(t *testing.T, path, target string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func lookupPath(t *testing.T, tr *Tree, rel string) Node {
	t.Helper()
	n := tr.Root()
	for _, name := range strings.Split(rel, "/") {
		var err error
		if n, err = tr.Lookup(context.Background(), n, name); err != nil {
			t.Fatalf("lookup %s: %v", rel, err)
		}
	}
	return n
}

// readAll reads a handle of the tree whole.
func readAll(h Handle) string {
	b, _ := io.ReadAll(io.NewSectionReader(h, 0, 1<<20))
	return string(b)
}

func TestSwapFileAfterLookup(t *testing.T) {
	forEachResolver(t, func(t *testing.T) {
		src, outside := swapFixture(t)
		tr, err := NewDir(src, Options{Open: (&fakeOpener{}).open, Detect: fakeDetect, Logger: codectest.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		ctx := context.Background()
		n := lookupPath(t, tr, "sub/file.txt")
		h, err := tr.Open(ctx, n)
		if err != nil || readAll(h) != "plain\n" {
			t.Fatalf("open before the swap: %v", err)
		}
		h.Close()
		swap(t, filepath.Join(src, "sub", "file.txt"), filepath.Join(outside, "file.txt"))
		if h, err := tr.Open(ctx, n); Errno(err) != syscall.ESTALE {
			if err == nil {
				t.Fatalf("open after the swap served %q", readAll(h))
			}
			t.Fatalf("open after the swap: %v, want ESTALE", err)
		}
		if _, err := tr.Getattr(ctx, n); Errno(err) != syscall.ESTALE {
			t.Errorf("getattr after the swap: %v, want ESTALE", err)
		}
		if _, err := tr.Lookup(ctx, lookupPath(t, tr, "sub"), "file.txt"); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("lookup of the symbolic link: %v, want ENOENT", err)
		}
		// Another file of the tree renamed over it: another object too.
		n = lookupPath(t, tr, "other.txt")
		if err := os.Rename(filepath.Join(src, "sub", "a.log"), filepath.Join(src, "other.txt")); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Open(ctx, n); Errno(err) != syscall.ESTALE {
			t.Errorf("open after a rename over the file: %v, want ESTALE", err)
		}
	})
}

func TestSwapDirAfterLookup(t *testing.T) {
	forEachResolver(t, func(t *testing.T) {
		src, outside := swapFixture(t)
		tr, op := newFakeTreeOf(t, src)
		ctx := context.Background()
		sub := lookupPath(t, tr, "sub")
		file := lookupPath(t, tr, "sub/file.txt")
		swap(t, filepath.Join(src, "sub"), outside)
		for _, name := range []string{"file.txt", "a.log"} {
			if n, err := tr.Lookup(ctx, sub, name); Errno(err) != syscall.ESTALE {
				t.Errorf("lookup of %s in the swapped directory: %+v %v, want ESTALE", name, n, err)
			}
		}
		if _, err := tr.OpenDir(ctx, sub); Errno(err) != syscall.ESTALE {
			t.Errorf("listing of the swapped directory: %v, want ESTALE", err)
		}
		if _, err := tr.Getattr(ctx, sub); Errno(err) != syscall.ESTALE {
			t.Errorf("getattr of the swapped directory: %v, want ESTALE", err)
		}
		if h, err := tr.Open(ctx, file); err == nil {
			t.Errorf("open below the swapped directory served %q", readAll(h))
		}
		if op.opens != 0 {
			t.Errorf("%d record files indexed through the swapped directory", op.opens)
		}
	})
}

func TestSwapRecordFileBeforeIndexing(t *testing.T) {
	forEachResolver(t, func(t *testing.T) {
		src, outside := swapFixture(t)
		tr, op := newFakeTreeOf(t, src)
		ctx := context.Background()
		n := lookupPath(t, tr, "sub/a.log")
		if n.Kind != KindRecordDir {
			t.Fatalf("a.log is %v, want a record directory", n.Kind)
		}
		swap(t, filepath.Join(src, "sub", "a.log"), filepath.Join(outside, "a.log"))
		if _, err := tr.OpenDir(ctx, n); Errno(err) != syscall.ESTALE {
			t.Errorf("listing the swapped record file: %v, want ESTALE", err)
		}
		if _, err := tr.Lookup(ctx, n, "0"); Errno(err) != syscall.ESTALE {
			t.Errorf("lookup in the swapped record file: %v, want ESTALE", err)
		}
		if op.opens != 0 {
			t.Errorf("the swapped record file was indexed (%d opens)", op.opens)
		}
	})
}

func TestModesFollowSource(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"private/p.log": fakeMagic + "x\n",
		"own.log":       fakeMagic + "y\n",
		"group.log":     fakeMagic + "z\n",
		"notes.txt":     "n\n",
	})
	for p, m := range map[string]os.FileMode{"private": 0o700, "own.log": 0o600, "group.log": 0o640, "notes.txt": 0o600} {
		if err := os.Chmod(filepath.Join(src, p), m); err != nil {
			t.Fatal(err)
		}
	}
	for _, rw := range []bool{false, true} {
		tr, err := NewDir(src, Options{Open: (&fakeOpener{}).open, Detect: fakeDetect, Logger: codectest.QuietLogger(), ReadWrite: rw})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		own := lookupPath(t, tr, "own.log")
		for _, c := range []struct {
			n      Node
			ro, rw uint32
		}{
			{lookupPath(t, tr, "private"), syscall.S_IFDIR | 0o500, syscall.S_IFDIR | 0o700},
			{lookupPath(t, tr, "private/p.log"), syscall.S_IFDIR | 0o555, syscall.S_IFDIR | 0o755},
			{own, syscall.S_IFDIR | 0o500, syscall.S_IFDIR | 0o700},
			{lookupPath(t, tr, "own.log/0"), syscall.S_IFREG | 0o400, syscall.S_IFREG | 0o400},
			{lookupPath(t, tr, "own.log/.recfs"), syscall.S_IFREG | 0o400, syscall.S_IFREG | 0o400},
			{lookupPath(t, tr, "group.log"), syscall.S_IFDIR | 0o550, syscall.S_IFDIR | 0o750},
			{lookupPath(t, tr, "group.log/0"), syscall.S_IFREG | 0o440, syscall.S_IFREG | 0o440},
			{lookupPath(t, tr, "notes.txt"), syscall.S_IFREG | 0o400, syscall.S_IFREG | 0o400},
		} {
			a, err := tr.Getattr(ctx, c.n)
			want := c.ro
			if rw {
				want = c.rw
			}
			if err != nil || a.Mode != want {
				t.Errorf("rw=%v: mode of %s: %o %v, want %o", rw, c.n.Name(), a.Mode, err, want)
			}
		}
		tr.Close()
	}
}

// TestAppendAfterSwapRefused: a record file swapped for a link to a file
// outside the tree between open and close is not appended to, whether the
// pending record stayed in memory or spilled to a temporary file (streamed
// appends).
func TestAppendAfterSwapRefused(t *testing.T) {
	for _, c := range []struct {
		name     string
		memLimit int64
	}{{"in memory", 0}, {"spilled", 2}} {
		t.Run(c.name, func(t *testing.T) { appendAfterSwap(t, c.memLimit) })
	}
}

func appendAfterSwap(t *testing.T, memLimit int64) {
	ctx := context.Background()
	base := t.TempDir()
	src, outside := filepath.Join(base, "src"), filepath.Join(base, "outside.log")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(src, "a.log"), outside} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := NewDir(src, Options{
		Open: func(ctx context.Context, sf SourceFile) (Records, error) {
			return openSourceFile(ctx, sf, index.Options{CacheDir: "-", Writable: true})
		},
		Detect:    func(r io.ReaderAt, size int64) bool { _, err := index.Detect(r, size); return err == nil },
		ReadWrite: true,
		MemLimit:  memLimit,
		Logger:    codectest.QuietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rd := lookupPath(t, tr, "a.log")
	_, h, err := tr.Create(ctx, rd, "new")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("appended"), 0); err != nil {
		t.Fatal(err)
	}
	swap(t, filepath.Join(src, "a.log"), outside)
	if _, err := h.Flush(ctx); Errno(err) != syscall.ESTALE {
		t.Errorf("append after the swap: %v, want ESTALE", err)
	}
	h.Close()
	if fi, err := os.Stat(outside); err != nil || fi.Size() != 0 {
		t.Errorf("the link's target was written: %v %v", fi.Size(), err)
	}
}

// openSourceFile is the OpenFunc of a directory tree: the table of sf as a
// local source refreshed through its Reopen.
func openSourceFile(ctx context.Context, sf SourceFile, o index.Options) (Records, error) {
	src, err := sf.Local()
	if err != nil {
		return nil, err
	}
	return index.OpenSource(ctx, src, o)
}
