//go:build linux

package fs

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"
)

// TestSourceFS: the source of a directory tree passes the standard
// library's file system checks, with either resolver.
func TestSourceFS(t *testing.T) {
	forEachResolver(t, func(t *testing.T) {
		src := t.TempDir()
		writeTree(t, src, map[string]string{
			"a.txt":          "alpha\n",
			"sub/b.log":      fakeMagic + "one\n",
			"sub/deep/c.txt": "gamma\n",
		})
		r, _, err := openRoot(src)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		if err := fstest.TestFS(sourceFS{r}, "a.txt", "sub/b.log", "sub/deep/c.txt"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSourceFSNoSymlinks: the source file system never follows a symbolic
// link, at the last component or on the way: Stat and ReadDir report the
// link itself, Open fails, and nothing outside the root is reached, unlike
// os.DirFS.
func TestSourceFSNoSymlinks(t *testing.T) {
	forEachResolver(t, func(t *testing.T) {
		src, outside := swapFixture(t)
		if err := os.Symlink(filepath.Join(outside, "file.txt"), filepath.Join(src, "link.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(src, "linkdir")); err != nil {
			t.Fatal(err)
		}
		// The contrast: os.DirFS reads the secret.
		if b, err := iofs.ReadFile(os.DirFS(src), "linkdir/file.txt"); err != nil || string(b) != "SECRET\n" {
			t.Fatalf("os.DirFS: %q, %v (the fixture should be reachable through it)", b, err)
		}
		r, _, err := openRoot(src)
		if err != nil {
			t.Fatal(err)
		}
		defer r.close()
		fsys := sourceFS{r}
		for _, name := range []string{"link.txt", "linkdir", "linkdir/file.txt", "linkdir/a.log"} {
			if f, err := fsys.Open(name); err == nil {
				f.Close()
				t.Errorf("Open(%s) succeeded", name)
			}
		}
		if _, err := iofs.ReadFile(fsys, "linkdir/file.txt"); err == nil {
			t.Error("ReadFile through a linked directory succeeded")
		}
		for _, name := range []string{"link.txt", "linkdir"} {
			fi, err := fsys.Stat(name)
			if err != nil || fi.Mode()&iofs.ModeSymlink == 0 {
				t.Errorf("Stat(%s) = %v, %v; want the link itself", name, fi, err)
			}
		}
		if _, err := fsys.Stat("linkdir/file.txt"); !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, syscall.EXDEV) {
			t.Errorf("Stat through a link: %v, want a resolution error", err)
		}
		ents, err := fsys.ReadDir(".")
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]iofs.FileMode{}
		for _, e := range ents {
			types[e.Name()] = e.Type()
		}
		if types["link.txt"] != iofs.ModeSymlink || types["linkdir"] != iofs.ModeSymlink || types["sub"] != iofs.ModeDir || types["other.txt"] != 0 {
			t.Errorf("ReadDir types = %v", types)
		}
		if _, err := fsys.Open("../outside/file.txt"); !errors.Is(err, iofs.ErrInvalid) {
			t.Errorf("Open(../) = %v, want ErrInvalid", err)
		}
	})
}

// TestSourceFSIdentity: FileInfo.Sys gives the entry's device and inode,
// which the tree compares with what it looked up.
func TestSourceFSIdentity(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "alpha\n"})
	r, _, err := openRoot(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	fi, err := sourceFS{r}.Stat("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(src, "a.txt"), &want); err != nil {
		t.Fatal(err)
	}
	ss, ok := fi.Sys().(*SourceStat)
	if !ok || ss.Dev != uint64(want.Dev) || ss.Ino != want.Ino || ss.Size != 6 || ss.Mode != want.Mode {
		t.Errorf("Sys = %+v, want dev %d ino %d mode %o", fi.Sys(), want.Dev, want.Ino, want.Mode)
	}
	st, ok := statOfInfo(fi)
	if !ok || st.dev != uint64(want.Dev) || st.ino != want.Ino || st.typ != typeReg {
		t.Errorf("statOfInfo = %+v", st)
	}
}

// TestFileMode pins the stat-bits conversion every adapter shares.
func TestFileMode(t *testing.T) {
	for _, c := range []struct {
		in   uint32
		want iofs.FileMode
	}{
		{syscall.S_IFDIR | 0o555, iofs.ModeDir | 0o555},
		{syscall.S_IFREG | 0o444, 0o444},
		{syscall.S_IFLNK | 0o777, iofs.ModeSymlink | 0o777},
		{syscall.S_IFIFO | 0o644, iofs.ModeIrregular | 0o644},
		{syscall.S_IFREG | 0o4755, 0o755},
	} {
		if got := FileMode(c.in); got != c.want {
			t.Errorf("FileMode(%#o) = %v, want %v", c.in, got, c.want)
		}
	}
}
