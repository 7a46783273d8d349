//go:build linux

package bazil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"
	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/index"
)

// payload returns record i of the test logs: the node suite's records.
func payload(i int) []byte { return fusetest.Payload(int64(i)) }

// testLog is a leveldb log written by leveldb.Writer, with what the
// writer said about it.
type testLog struct {
	path string
	recs [][]byte
	offs []int64 // offset of each record's first chunk, as WriteRecord returned
}

// writeLog writes n records (payload(0..n-1) plus extra) to a new log in
// dir.
func writeLog(t testing.TB, dir string, n int, extra ...[]byte) *testLog {
	t.Helper()
	l := &testLog{path: filepath.Join(dir, "test.log")}
	for i := 0; i < n; i++ {
		l.recs = append(l.recs, payload(i))
	}
	l.recs = append(l.recs, extra...)
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for _, r := range l.recs {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		l.offs = append(l.offs, off)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

// openTable indexes a log without touching the user's cache.
func openTable(t testing.TB, path string) *index.Table {
	t.Helper()
	tab, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// badSource fails reads of one record the way a damaged chunk would.
type badSource struct {
	fs.Records
	bad int64
}

func (b badSource) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n == b.bad {
		return 0, &codec.CorruptError{Format: codec.LevelDB, Off: 1234, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	}
	return b.Records.ReadAt(n, p, off)
}

// fileTree returns the tree of a log of n records, its log, and the root
// node of the bazil file system over it.
func fileTree(t testing.TB, n int, o fs.MountOptions, lg logrus.FieldLogger) (*fs.Tree, *testLog, node) {
	t.Helper()
	l := writeLog(t, t.TempDir(), n)
	tab := openTable(t, l.path)
	tr, err := fs.NewFile(l.path, badSource{Records: tab, bad: -1}, fs.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	root, err := newFS(tr, o).Root()
	if err != nil {
		t.Fatal(err)
	}
	return tr, l, root.(node)
}

func lookup(t testing.TB, parent node, name string) (node, *fuse.LookupResponse, error) {
	t.Helper()
	resp := &fuse.LookupResponse{}
	c, err := parent.Lookup(context.Background(), &fuse.LookupRequest{Name: name}, resp)
	if err != nil {
		return node{}, resp, err
	}
	return c.(node), resp, nil
}

func attrOf(t testing.TB, n node) fuse.Attr {
	t.Helper()
	var a fuse.Attr
	if err := n.Attr(context.Background(), &a); err != nil {
		t.Fatalf("Attr: %v", err)
	}
	return a
}

// readAll reads a file node through Open and Read in requests of size
// bytes, the way the kernel does.
func readAll(t testing.TB, n node, size int) ([]byte, fuse.OpenResponseFlags, error) {
	t.Helper()
	ctx := context.Background()
	oresp := &fuse.OpenResponse{}
	h, err := n.Open(ctx, &fuse.OpenRequest{Flags: fuse.OpenReadOnly}, oresp)
	if err != nil {
		return nil, 0, err
	}
	defer h.(bazilfs.HandleReleaser).Release(ctx, &fuse.ReleaseRequest{})
	var out []byte
	for off := int64(0); ; {
		resp := &fuse.ReadResponse{Data: make([]byte, 0, size)}
		if err := h.(bazilfs.HandleReader).Read(ctx, &fuse.ReadRequest{Offset: off, Size: size}, resp); err != nil {
			return out, oresp.Flags, err
		}
		if len(resp.Data) == 0 {
			return out, oresp.Flags, nil
		}
		out = append(out, resp.Data...)
		off += int64(len(resp.Data))
	}
}

// listDir opens a directory node and returns its ReadDirAll listing.
func listDir(t testing.TB, n node) ([]fuse.Dirent, fuse.OpenResponseFlags) {
	t.Helper()
	ctx := context.Background()
	oresp := &fuse.OpenResponse{}
	h, err := n.Open(ctx, &fuse.OpenRequest{Dir: true, Flags: fuse.OpenReadOnly | fuse.OpenDirectory}, oresp)
	if err != nil {
		t.Fatalf("opendir: %v", err)
	}
	defer h.(bazilfs.HandleReleaser).Release(ctx, &fuse.ReleaseRequest{})
	ents, err := h.(bazilfs.HandleReadDirAller).ReadDirAll(ctx)
	if err != nil {
		t.Fatalf("ReadDirAll: %v", err)
	}
	return ents, oresp.Flags
}

// TestReadDirAllRewind checks that a second ReadDirAll on one handle (a
// rewinddir) lists the same entries again.
func TestReadDirAllRewind(t *testing.T) {
	_, _, root := fileTree(t, 20, fs.MountOptions{}, codectest.QuietLogger())
	ctx := context.Background()
	h, err := root.Open(ctx, &fuse.OpenRequest{Dir: true}, &fuse.OpenResponse{})
	if err != nil {
		t.Fatal(err)
	}
	d := h.(bazilfs.HandleReadDirAller)
	a, err := d.ReadDirAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.ReadDirAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2+21 || a[0].Name != "." || a[1].Name != ".." || !slices.Equal(a, b) {
		t.Errorf("first %d entries, second %d, equal %v", len(a), len(b), slices.Equal(a, b))
	}
}

func TestRead(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320000 bytes, > 2 requests
	l := writeLog(t, t.TempDir(), 300, big, nil)
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, _ := newFS(tr, fs.MountOptions{}).Root()
	root := r.(node)
	for _, size := range []int{1, 4096, 128 << 10} {
		for i, want := range l.recs {
			if size == 1 && len(want) > 1000 {
				continue // byte-at-a-time reads of long records prove nothing more
			}
			c, _, err := lookup(t, root, strconv.Itoa(i))
			if err != nil {
				t.Fatal(err)
			}
			got, flags, err := readAll(t, c, size)
			if err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("record %d read in %d-byte requests: %d bytes, want %d", i, size, len(got), len(want))
			}
			if flags&fuse.OpenKeepCache == 0 || flags&openNoFlush == 0 {
				t.Fatalf("record %d open flags %v", i, flags)
			}
		}
	}
	// POLL is refused with ENOSYS, which turns it off for the mount.
	pc, _, _ := lookup(t, root, "3")
	ph, err := pc.Open(context.Background(), &fuse.OpenRequest{}, &fuse.OpenResponse{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ph.(bazilfs.HandlePoller).Poll(context.Background(), &fuse.PollRequest{}, &fuse.PollResponse{}); !errors.Is(err, syscall.ENOSYS) {
		t.Errorf("poll: %v, want ENOSYS", err)
	}
	// Past the end: no bytes, no error.
	c, _, _ := lookup(t, root, "5")
	h, err := c.Open(context.Background(), &fuse.OpenRequest{}, &fuse.OpenResponse{})
	if err != nil {
		t.Fatal(err)
	}
	resp := &fuse.ReadResponse{Data: make([]byte, 0, 100)}
	if err := h.(bazilfs.HandleReader).Read(context.Background(), &fuse.ReadRequest{Offset: 1 << 40, Size: 100}, resp); err != nil || len(resp.Data) != 0 {
		t.Errorf("read past the end: %d bytes, %v", len(resp.Data), err)
	}
	// .recfs is readable and names the record count.
	info, _, err := lookup(t, root, ".recfs")
	if err != nil {
		t.Fatal(err)
	}
	text, _, err := readAll(t, info, 4096)
	if err != nil || !strings.Contains(string(text), "records: 302\n") {
		t.Errorf(".recfs: %q %v", text, err)
	}
	if a := attrOf(t, info); a.Size != uint64(len(text)) {
		t.Errorf(".recfs size %d, read %d bytes", a.Size, len(text))
	}
}

func TestStatfs(t *testing.T) {
	_, _, root := fileTree(t, 1, fs.MountOptions{}, codectest.QuietLogger())
	f := &fileSystem{root: root}
	resp := &fuse.StatfsResponse{}
	if err := f.Statfs(context.Background(), &fuse.StatfsRequest{}, resp); err != nil {
		t.Fatal(err)
	}
	if resp.Bsize != 4096 || resp.Namelen != 255 || resp.Bavail != 0 {
		t.Errorf("statfs %+v", resp)
	}
}

func TestOptions(t *testing.T) {
	tr, _, _ := fileTree(t, 1, fs.MountOptions{}, codectest.QuietLogger())
	for _, tc := range []struct {
		o    fs.MountOptions
		want int
	}{
		{fs.MountOptions{}, 5},
		{fs.MountOptions{AllowOther: true}, 7},
	} {
		if got := len(mountOptions(tr, tc.o)); got != tc.want {
			t.Errorf("%+v: %d options, want %d", tc.o, got, tc.want)
		}
	}
	// A writable mount needs a writable tree.
	if _, err := Mount(t.TempDir(), tr, fs.MountOptions{ReadWrite: true}); err == nil || !strings.Contains(err.Error(), "ReadWrite") {
		t.Errorf("--rw over a read-only tree: %v", err)
	}
	if got, want := len(mountOptions(tr, fs.MountOptions{ReadWrite: true})), 4; got != want {
		t.Errorf("--rw: %d options, want %d (no ro)", got, want)
	}
}

// mounted reports whether dir is a mount point in /proc/self/mountinfo, and
// its file system type.
func mounted(t *testing.T, dir string) (bool, string) {
	t.Helper()
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[4] != dir {
			continue
		}
		for i, x := range f {
			if x == "-" && i+1 < len(f) {
				return true, f[i+1]
			}
		}
		return true, ""
	}
	return false, ""
}

// TestMount mounts a log in-process and reads it through the kernel.
func TestMount(t *testing.T) {
	fusetest.NeedFUSE(t, "fusermount3")
	big := bytes.Repeat([]byte("big record "), 30000) // 330000 bytes: three 128 KiB reads
	l := writeLog(t, t.TempDir(), 500, big)
	tr, err := fs.NewFile(l.path, badSource{Records: openTable(t, l.path), bad: 5}, fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// One P: before disablePoll, the first os.Open of a file on the mount
	// deadlocked the process (Go's netpoller waited for a POLL answer
	// that only this process could give).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dir := t.TempDir()
	srv, err := Mount(dir, tr, fs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ok, _ := mounted(t, dir); !ok {
			return
		}
		if err := srv.Unmount(); err != nil {
			t.Logf("unmount: %v; lazy unmount", err)
			_ = exec.Command("fusermount3", "-uz", dir).Run()
		}
	})
	ok, typ := mounted(t, dir)
	if !ok || typ != "fuse.recfs" {
		t.Fatalf("mount of %s: listed %v, type %q", dir, ok, typ)
	}

	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(l.recs)+1 {
		t.Fatalf("ReadDir: %d entries, want %d", len(ents), len(l.recs)+1)
	}
	// os.ReadDir sorts: ".recfs" comes before the records.
	if ents[0].Name() != ".recfs" {
		t.Errorf("first entry %q, want .recfs", ents[0].Name())
	}
	for i, e := range ents[1:] {
		if want := fmt.Sprintf("%06d", i); e.Name() != want || e.IsDir() {
			t.Fatalf("entry %d: %q dir=%v, want %q", i, e.Name(), e.IsDir(), want)
		}
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if i == 5 {
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("read of a corrupt record: %v, want EIO", err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, l.recs[i]) {
			t.Fatalf("record %d: %d bytes, %v; want %d bytes", i, len(got), err, len(l.recs[i]))
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "42"))
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := tr.Lookup(context.Background(), tr.Root(), "42")
	ta, _ := tr.Getattr(context.Background(), tn)
	if st := fi.Sys().(*syscall.Stat_t); st.Ino != ta.Ino || fi.Size() != int64(len(l.recs[42])) || fi.Mode() != 0o444 {
		t.Errorf("stat 42: ino %d (tree %d), size %d, mode %v", st.Ino, ta.Ino, fi.Size(), fi.Mode())
	}
	if _, err := os.Create(filepath.Join(dir, "new")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("create: %v, want EROFS", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "no-such-record")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("bad name: %v, want ENOENT", err)
	}
	if _, err := os.Stat(filepath.Join(dir, pollFileName)); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("%s after Mount: %v, want ENOENT", pollFileName, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "000501")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("record past the end: %v, want ENOENT", err)
	}
	buf := make([]byte, 64)
	if _, err := syscall.Getxattr(filepath.Join(dir, "1"), "user.recfs.offset", buf); !errors.Is(err, syscall.ENOTSUP) {
		t.Errorf("getxattr with xattrs off: %v, want ENOTSUP", err)
	}
	info, err := os.ReadFile(filepath.Join(dir, ".recfs"))
	if err != nil || !strings.Contains(string(info), fmt.Sprintf("records: %d\n", len(l.recs))) {
		t.Errorf(".recfs: %q %v", info, err)
	}

	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if ok, _ := mounted(t, dir); ok {
		t.Errorf("%s still mounted after Unmount", dir)
	}
}

// TestMountXattrs mounts with xattrs on and reads them through the kernel.
func TestMountXattrs(t *testing.T) {
	fusetest.NeedFUSE(t, "fusermount3")
	l := writeLog(t, t.TempDir(), 30)
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := t.TempDir()
	srv, err := Mount(dir, tr, fs.MountOptions{Xattrs: true, Name: "recfs"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			_ = exec.Command("fusermount3", "-uz", dir).Run()
		}
	})
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(filepath.Join(dir, "000012"), "user.recfs.offset", buf)
	if err != nil || string(buf[:n]) != strconv.FormatInt(l.offs[12], 10) {
		t.Errorf("offset of 12: %q %v, want %d", buf[:max(n, 0)], err, l.offs[12])
	}
	if _, err := syscall.Getxattr(filepath.Join(dir, "000012"), "user.other", buf); !errors.Is(err, syscall.ENODATA) {
		t.Errorf("unknown xattr: %v, want ENODATA", err)
	}
	n, err = syscall.Listxattr(dir, buf)
	if err != nil || !strings.Contains(string(buf[:max(n, 0)]), "user.recfs.records\x00") {
		t.Errorf("listxattr: %q %v", buf[:max(n, 0)], err)
	}
}

// Example drives the bazil file system of a one-record log without a
// kernel: look a record up by name, open it and read it.
func Example() {
	dir, _ := os.MkdirTemp("", "bazil-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.log")
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	w.WriteRecord([]byte("hello, record"))
	w.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)

	tab, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tree, _ := fs.NewFile(path, tab, fs.Options{})
	defer tree.Close()

	ctx := context.Background()
	root, _ := newFS(tree, fs.MountOptions{}).Root()
	rec, _ := root.(bazilfs.NodeRequestLookuper).Lookup(ctx, &fuse.LookupRequest{Name: "000000"}, &fuse.LookupResponse{})
	var a fuse.Attr
	rec.Attr(ctx, &a)
	h, _ := rec.(bazilfs.NodeOpener).Open(ctx, &fuse.OpenRequest{}, &fuse.OpenResponse{})
	resp := &fuse.ReadResponse{Data: make([]byte, 0, 4096)}
	h.(bazilfs.HandleReader).Read(ctx, &fuse.ReadRequest{Size: 4096}, resp)
	fmt.Println(a.Mode, a.Size)
	fmt.Printf("%s\n", resp.Data)
	// Output:
	// -r--r--r-- 13
	// hello, record
}

// FuzzLookup checks that any name either resolves to the record or fixed
// entry it denotes, with the inode the listing shows, or gives ENOENT.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"0", "000000", "000099", "99", "100", "0099", ".recfs", "trailer", "", "-1", "1e2", "000000000000000000001"} {
		f.Add(s)
	}
	const n = 100
	_, _, root := fileTree(f, n, fs.MountOptions{}, codectest.QuietLogger())
	ents, _ := listDir(f, root)
	inos := map[string]uint64{}
	for _, e := range ents {
		inos[e.Name] = e.Inode
	}
	f.Fuzz(func(t *testing.T, name string) {
		// bazil answers a LOOKUP with Lookup and then Attr of the node
		// found; either one's ENOENT is the kernel's.
		c, _, err := lookup(t, root, name)
		var a fuse.Attr
		if err == nil {
			err = c.Attr(context.Background(), &a)
		}
		// The names that exist: listed names, and numbers below n
		// written without leading zeros.
		canon := name
		if v, perr := strconv.ParseUint(name, 10, 63); perr == nil && strconv.FormatUint(v, 10) == name && v < n {
			canon = fmt.Sprintf("%06d", v)
		}
		ino, exists := inos[canon]
		if !exists {
			if !errors.Is(err, syscall.ENOENT) {
				t.Fatalf("lookup %q: %v, want ENOENT", name, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("lookup %q: %v", name, err)
		}
		if a.Inode != ino {
			t.Fatalf("lookup %q: inode %d, listing says %d", name, a.Inode, ino)
		}
	})
}

// FuzzRead checks that a read at any offset and size returns exactly the
// matching slice of the record.
func FuzzRead(f *testing.F) {
	f.Add(uint16(3), uint32(0), uint32(100))
	f.Add(uint16(96), uint32(40000), uint32(131072))
	f.Add(uint16(7), uint32(1<<31), uint32(1))
	const n = 200
	_, l, root := fileTree(f, n, fs.MountOptions{}, codectest.QuietLogger())
	f.Fuzz(func(t *testing.T, rec uint16, off, size uint32) {
		i := int(rec) % n
		size %= 128<<10 + 1
		c, _, err := lookup(t, root, strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		h, err := c.Open(context.Background(), &fuse.OpenRequest{}, &fuse.OpenResponse{})
		if err != nil {
			t.Fatal(err)
		}
		resp := &fuse.ReadResponse{Data: make([]byte, 0, size)}
		if err := h.(bazilfs.HandleReader).Read(context.Background(), &fuse.ReadRequest{Offset: int64(off), Size: int(size)}, resp); err != nil {
			t.Fatal(err)
		}
		want := l.recs[i][min(int(off), len(l.recs[i])):]
		want = want[:min(len(want), int(size))]
		if !bytes.Equal(resp.Data, want) {
			t.Fatalf("record %d [%d:+%d]: %d bytes, want %d", i, off, size, len(resp.Data), len(want))
		}
	})
}

// BenchmarkLookupRead measures a lookup, attributes, open, read and release
// of one record through the bridge, without a kernel.
func BenchmarkLookupRead(b *testing.B) {
	_, l, root := fileTree(b, 5000, fs.MountOptions{}, codectest.QuietLogger())
	ctx := context.Background()
	var total int64
	for i := 0; i < 1000; i++ {
		total += int64(len(l.recs[i]))
	}
	b.SetBytes(total / 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c, _, err := lookup(b, root, strconv.Itoa(i%1000))
		if err != nil {
			b.Fatal(err)
		}
		attrOf(b, c)
		h, err := c.Open(ctx, &fuse.OpenRequest{}, &fuse.OpenResponse{})
		if err != nil {
			b.Fatal(err)
		}
		resp := &fuse.ReadResponse{Data: make([]byte, 0, 4096)}
		if err := h.(bazilfs.HandleReader).Read(ctx, &fuse.ReadRequest{Size: 4096}, resp); err != nil {
			b.Fatal(err)
		}
		h.(bazilfs.HandleReleaser).Release(ctx, &fuse.ReleaseRequest{})
	}
}

// BenchmarkReadDirAll measures building the whole listing of a record
// directory, which bazil needs for every opendir+readdir; bytes are the
// encoded dirents bazil keeps per open directory.
func BenchmarkReadDirAll(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			_, _, root := fileTree(b, n, fs.MountOptions{}, codectest.QuietLogger())
			ents, _ := listDir(b, root)
			var enc []byte
			for _, e := range ents {
				enc = fuse.AppendDirent(enc, e)
			}
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				listDir(b, root)
			}
		})
	}
}

// TestUnmountBusy checks that Unmount fails while a file on the mount is
// open, leaving the mount usable, and succeeds once it is closed.
func TestUnmountBusy(t *testing.T) {
	fusetest.NeedFUSE(t, "fusermount3")
	l := writeLog(t, t.TempDir(), 5)
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := t.TempDir()
	srv, err := Mount(dir, tr, fs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ok, _ := mounted(t, dir); ok {
			_ = exec.Command("fusermount3", "-uz", dir).Run()
		}
	})
	f, err := os.Open(filepath.Join(dir, "000003"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Unmount(); err == nil {
		t.Fatal("Unmount succeeded with a file open")
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, l.recs[3]) {
		t.Errorf("read after a failed unmount: %v", err)
	}
	if err := srv.Unmount(); err != nil {
		t.Fatalf("Unmount after close: %v", err)
	}
	if err := srv.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if ok, _ := mounted(t, dir); ok {
		t.Errorf("%s still mounted", dir)
	}
	// Unmounting again is a no-op.
	if err := srv.Unmount(); err != nil {
		t.Errorf("second Unmount: %v", err)
	}
}

func TestDebugLog(t *testing.T) {
	for _, debug := range []bool{false, true} {
		lg, hook := test.NewNullLogger()
		lg.SetLevel(logrus.DebugLevel)
		c := config(fs.MountPolicy{Debug: debug, Logger: lg})
		c.Debug("request 1")
		want := 0
		if debug {
			want = 1
		}
		if n := len(hook.AllEntries()); n != want {
			t.Fatalf("debug=%v: %d log lines, want %d", debug, n, want)
		}
		if debug {
			if e := hook.LastEntry(); e.Level != logrus.DebugLevel || e.Message != "request 1" || e.Data["backend"] != "bazil" {
				t.Errorf("log line %v %q %v", e.Level, e.Message, e.Data)
			}
		}
	}
}

// TestXattrsOff: with xattrs off, bazil's nodes answer ENOSYS, which the
// kernel turns into ENOTSUP and remembers, so it stops asking (the node
// suite checks the ENOTSUP callers see, and the attributes themselves).
func TestXattrsOff(t *testing.T) {
	_, _, root := fileTree(t, 3, fs.MountOptions{}, codectest.QuietLogger())
	ctx := context.Background()
	if err := root.Getxattr(ctx, &fuse.GetxattrRequest{Name: "user.recfs.format"}, &fuse.GetxattrResponse{}); !errors.Is(err, syscall.ENOSYS) {
		t.Errorf("getxattr: %v, want ENOSYS (ENOTSUP for the caller)", err)
	}
	if err := root.Listxattr(ctx, &fuse.ListxattrRequest{}, &fuse.ListxattrResponse{}); !errors.Is(err, syscall.ENOSYS) {
		t.Errorf("listxattr: %v, want ENOSYS", err)
	}
}
