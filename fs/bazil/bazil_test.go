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
	"time"

	"github.com/recfs/recfs/codec/leveldb"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"
	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// payload returns record i of the test logs: a few bytes to a few hundred,
// with every 97th of the first thousand long enough to span leveldb blocks.
func payload(i int) []byte {
	n := (i * 37) % 300
	if i%97 == 96 && i < 1000 {
		n = 40000 + i
	}
	b := make([]byte, n)
	for j := range b {
		b[j] = byte('a' + (i+j)%26)
	}
	return b
}

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

func quietLogger() *logrus.Logger {
	lg := logrus.New()
	lg.SetOutput(io.Discard)
	return lg
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
	fs.Source
	bad int64
}

func (b badSource) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n == b.bad {
		return 0, &codec.CorruptError{Format: codec.LevelDB, Off: 1234, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	}
	return b.Source.ReadAt(n, p, off)
}

// fileTree returns the tree of a log of n records, its log, and the root
// node of the bazil file system over it.
func fileTree(t testing.TB, n int, o fs.MountOptions, lg logrus.FieldLogger) (*fs.Tree, *testLog, node) {
	t.Helper()
	l := writeLog(t, t.TempDir(), n)
	tab := openTable(t, l.path)
	tr, err := fs.NewFile(l.path, badSource{Source: tab, bad: -1}, fs.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	root, err := NewFS(tr, o).Root()
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

func TestLookupAttr(t *testing.T) {
	const n = 1000
	tr, l, root := fileTree(t, n, fs.MountOptions{}, quietLogger())
	ra := attrOf(t, root)
	if ra.Mode != os.ModeDir|0o555 || ra.Valid != time.Hour {
		t.Errorf("root: mode %v valid %v", ra.Mode, ra.Valid)
	}
	for _, tc := range []struct {
		name string
		rec  int // record number, or -1 for ENOENT, -2 for .recfs
	}{
		{"000000", 0},
		{"0", 0},
		{"000042", 42},
		{"42", 42},
		{"000999", 999},
		{"999", 999},
		{"001000", -1},
		{"1000", -1},
		{"0042", -1},
		{"-1", -1},
		{"nope", -1},
		{"trailer", -1}, // a leveldb log has no trailer
		{".recfs", -2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := lookup(t, root, tc.name)
			if tc.rec == -1 {
				if !errors.Is(err, syscall.ENOENT) {
					t.Fatalf("lookup: %v, want ENOENT", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.EntryValid != time.Hour {
				t.Errorf("entry valid %v", resp.EntryValid)
			}
			a := attrOf(t, c)
			ta, err := tr.Getattr(context.Background(), c.n)
			if err != nil {
				t.Fatal(err)
			}
			if a.Inode != ta.Ino || a.Inode < 2 || a.Valid != time.Hour || a.Nlink != 1 {
				t.Errorf("attr %+v, tree inode %d", a, ta.Ino)
			}
			if a.Mode != 0o444 {
				t.Errorf("mode %v", a.Mode)
			}
			if tc.rec >= 0 && a.Size != uint64(len(l.recs[tc.rec])) {
				t.Errorf("size %d, want %d", a.Size, len(l.recs[tc.rec]))
			}
		})
	}
	// Padded and plain names are one node, so bazil gives them one ID.
	a, _, _ := lookup(t, root, "000042")
	b, _, _ := lookup(t, root, "42")
	if a != b {
		t.Errorf("000042 and 42 are different nodes")
	}
	// Lookups in a file are ENOTDIR.
	if _, _, err := lookup(t, a, "x"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("lookup in a file: %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	for _, tc := range []struct {
		entry, attr time.Duration
	}{
		{0, 0},
		{time.Second, 2 * time.Second},
		{5 * time.Minute, 0},
	} {
		t.Run(fmt.Sprint(tc.entry, tc.attr), func(t *testing.T) {
			_, _, root := fileTree(t, 3, fs.MountOptions{EntryTimeout: tc.entry, AttrTimeout: tc.attr}, quietLogger())
			c, resp, err := lookup(t, root, "1")
			if err != nil {
				t.Fatal(err)
			}
			wantE, wantA := tc.entry, tc.attr
			if wantE == 0 {
				wantE = time.Hour
			}
			if wantA == 0 {
				wantA = time.Hour
			}
			if resp.EntryValid != wantE || attrOf(t, c).Valid != wantA {
				t.Errorf("entry %v attr %v, want %v %v", resp.EntryValid, attrOf(t, c).Valid, wantE, wantA)
			}
		})
	}
}

func TestReadDirAll(t *testing.T) {
	for _, n := range []int{0, 1, 250, 1000, 1001} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			tr, _, root := fileTree(t, n, fs.MountOptions{}, quietLogger())
			ents, flags := listDir(t, root)
			if flags&fuse.OpenCacheDir == 0 {
				t.Errorf("record directory opened without CACHE_DIR: %v", flags)
			}
			// "." and ".." first: the root's own inode both (it is the
			// mount's root).
			if len(ents) < 2 || ents[0].Name != "." || ents[1].Name != ".." || ents[0].Inode != attrOf(t, root).Inode || ents[1].Inode != ents[0].Inode {
				t.Fatalf("listing starts %v", ents[:min(2, len(ents))])
			}
			ents = ents[2:]
			if len(ents) != n+1 {
				t.Fatalf("%d entries, want %d", len(ents), n+1)
			}
			// Names: n zero-padded to max(6, digits(n-1)) (fs-layout.md),
			// then .recfs.
			width := max(6, len(strconv.Itoa(max(n-1, 0))))
			seen := map[uint64]bool{}
			for i, e := range ents {
				want := fmt.Sprintf("%0*d", width, i)
				if i == n {
					want = ".recfs"
				}
				if e.Name != want || e.Type != fuse.DT_File {
					t.Fatalf("entry %d: %q type %v, want %q file", i, e.Name, e.Type, want)
				}
				if seen[e.Inode] {
					t.Fatalf("entry %d: inode %d repeated", i, e.Inode)
				}
				seen[e.Inode] = true
			}
			// A listed inode is the inode a lookup of the name reports.
			for _, i := range []int{0, n / 2, n} {
				c, _, err := lookup(t, root, ents[i].Name)
				if err != nil {
					t.Fatal(err)
				}
				if a := attrOf(t, c); a.Inode != ents[i].Inode {
					t.Errorf("%s: lookup inode %d, listing %d", ents[i].Name, a.Inode, ents[i].Inode)
				}
			}
			_ = tr
		})
	}
}

// TestReadDirAllRewind checks that a second ReadDirAll on one handle (a
// rewinddir) lists the same entries again.
func TestReadDirAllRewind(t *testing.T) {
	_, _, root := fileTree(t, 20, fs.MountOptions{}, quietLogger())
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
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, _ := NewFS(tr, fs.MountOptions{}).Root()
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

func TestReadErrorReported(t *testing.T) {
	lg, hook := test.NewNullLogger()
	l := writeLog(t, t.TempDir(), 10)
	tr, err := fs.NewFile(l.path, badSource{Source: openTable(t, l.path), bad: 7}, fs.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, _ := NewFS(tr, fs.MountOptions{}).Root()
	c, _, err := lookup(t, r.(node), "7")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, _, err := readAll(t, c, 4096); !errors.Is(err, syscall.EIO) {
			t.Fatalf("read of a corrupt record: %v, want EIO", err)
		}
	}
	if n := len(hook.AllEntries()); n != 1 {
		t.Fatalf("%d log lines for 3 failed reads, want 1", n)
	}
	e := hook.LastEntry()
	if e.Data["record"] != int64(7) || e.Data["file_offset"] != int64(1234) {
		t.Errorf("log fields %v", e.Data)
	}
	// Another record still reads.
	c, _, _ = lookup(t, r.(node), "6")
	if got, _, err := readAll(t, c, 4096); err != nil || !bytes.Equal(got, l.recs[6]) {
		t.Errorf("record 6: %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	_, _, root := fileTree(t, 3, fs.MountOptions{}, quietLogger())
	ctx := context.Background()
	rec, _, err := lookup(t, root, "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"open wronly", func() error {
			_, err := rec.Open(ctx, &fuse.OpenRequest{Flags: fuse.OpenWriteOnly}, &fuse.OpenResponse{})
			return err
		}},
		{"open rdwr", func() error {
			_, err := rec.Open(ctx, &fuse.OpenRequest{Flags: fuse.OpenReadWrite}, &fuse.OpenResponse{})
			return err
		}},
		{"open trunc", func() error {
			_, err := rec.Open(ctx, &fuse.OpenRequest{Flags: fuse.OpenReadOnly | fuse.OpenTruncate}, &fuse.OpenResponse{})
			return err
		}},
		{"create", func() error {
			_, _, err := root.Create(ctx, &fuse.CreateRequest{Name: "new"}, &fuse.CreateResponse{})
			return err
		}},
		{"mkdir", func() error { _, err := root.Mkdir(ctx, &fuse.MkdirRequest{Name: "d"}); return err }},
		{"mknod", func() error { _, err := root.Mknod(ctx, &fuse.MknodRequest{Name: "d"}); return err }},
		{"remove", func() error { return root.Remove(ctx, &fuse.RemoveRequest{Name: "1"}) }},
		{"rename", func() error { return root.Rename(ctx, &fuse.RenameRequest{OldName: "1", NewName: "2"}, root) }},
		{"symlink", func() error { _, err := root.Symlink(ctx, &fuse.SymlinkRequest{NewName: "s", Target: "1"}); return err }},
		{"link", func() error { _, err := root.Link(ctx, &fuse.LinkRequest{NewName: "s"}, rec); return err }},
		{"setattr", func() error { return rec.Setattr(ctx, &fuse.SetattrRequest{}, &fuse.SetattrResponse{}) }},
		{"setxattr", func() error { return rec.Setxattr(ctx, &fuse.SetxattrRequest{Name: "user.x"}) }},
		{"removexattr", func() error { return rec.Removexattr(ctx, &fuse.RemovexattrRequest{Name: "user.x"}) }},
	} {
		if err := tc.op(); !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", tc.name, err)
		}
	}
}

func TestXattrs(t *testing.T) {
	ctx := context.Background()
	get := func(n node, name string) (string, error) {
		resp := &fuse.GetxattrResponse{}
		err := n.Getxattr(ctx, &fuse.GetxattrRequest{Name: name}, resp)
		return string(resp.Xattr), err
	}
	list := func(n node) ([]string, error) {
		resp := &fuse.ListxattrResponse{}
		err := n.Listxattr(ctx, &fuse.ListxattrRequest{}, resp)
		names := strings.Split(strings.TrimSuffix(string(resp.Xattr), "\x00"), "\x00")
		if len(resp.Xattr) == 0 {
			names = nil
		}
		return names, err
	}

	t.Run("off", func(t *testing.T) {
		_, _, root := fileTree(t, 3, fs.MountOptions{}, quietLogger())
		if _, err := get(root, "user.recfs.format"); !errors.Is(err, syscall.ENOSYS) {
			t.Errorf("getxattr: %v, want ENOSYS (ENOTSUP for the caller)", err)
		}
		if _, err := list(root); !errors.Is(err, syscall.ENOSYS) {
			t.Errorf("listxattr: %v, want ENOSYS", err)
		}
	})
	t.Run("on", func(t *testing.T) {
		_, l, root := fileTree(t, 50, fs.MountOptions{Xattrs: true}, quietLogger())
		rec, _, err := lookup(t, root, "17")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			n     node
			name  string
			value string
			err   error
		}{
			{root, "user.recfs.format", codec.LevelDB.String(), nil},
			{root, "user.recfs.records", "50", nil},
			{root, "user.recfs.offset", "", fuse.ErrNoXattr},
			{root, "security.selinux", "", fuse.ErrNoXattr},
			{rec, "user.recfs.offset", strconv.FormatInt(l.offs[17], 10), nil},
			{rec, "user.recfs.length", strconv.Itoa(len(l.recs[17])), nil},
			{rec, "user.recfs.format", "", fuse.ErrNoXattr},
			{rec, "system.posix_acl_access", "", fuse.ErrNoXattr},
		} {
			v, err := get(tc.n, tc.name)
			if !errors.Is(err, tc.err) || v != tc.value {
				t.Errorf("%v %s = %q, %v; want %q, %v", tc.n.n.Kind, tc.name, v, err, tc.value, tc.err)
			}
		}
		names, err := list(rec)
		if err != nil || !slices.Equal(names, []string{"user.recfs.offset", "user.recfs.length"}) {
			t.Errorf("record xattrs %q %v", names, err)
		}
		names, err = list(root)
		if err != nil || !slices.Contains(names, "user.recfs.format") || !slices.Contains(names, "user.recfs.records") {
			t.Errorf("directory xattrs %q %v", names, err)
		}
	})
}

// TestDirTree serves a mirrored directory: subdirectories, a record file
// shown as a directory, and a passed-through text file.
func TestDirTree(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := writeLog(t, filepath.Join(dir, "sub"), 12)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("plain text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := fs.NewDir(dir, fs.Options{
		Open: func(ctx context.Context, sf fs.SourceFile) (fs.Source, error) {
			return index.OpenFile(ctx, sf.File, sf.Path, index.Options{CacheDir: "-", Reopen: sf.Reopen})
		},
		Detect: func(r io.ReaderAt, size int64) bool {
			f, err := index.Detect(r, size)
			return err == nil && f != codec.Unknown
		},
		Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, _ := NewFS(tr, fs.MountOptions{}).Root()
	root := r.(node)
	ents, flags := listDir(t, root)
	if flags&fuse.OpenCacheDir != 0 {
		t.Errorf("a mirrored directory may change, but was opened with CACHE_DIR")
	}
	var got []string
	for _, e := range ents {
		got = append(got, fmt.Sprintf("%s:%v", e.Name, e.Type))
	}
	want := []string{".:" + fuse.DT_Dir.String(), "..:" + fuse.DT_Dir.String(), "notes.txt:" + fuse.DT_File.String(), "sub:" + fuse.DT_Dir.String()}
	if !slices.Equal(got, want) {
		t.Errorf("root lists %v, want %v", got, want)
	}
	notes, _, err := lookup(t, root, "notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	text, flags, err := readAll(t, notes, 4096)
	if err != nil || string(text) != "plain text\n" {
		t.Errorf("notes.txt: %q %v", text, err)
	}
	if flags&fuse.OpenKeepCache != 0 {
		t.Errorf("a passed-through file may change, but was opened with KEEP_CACHE")
	}
	if a := attrOf(t, notes); a.Mode != 0o444 || a.Size != 11 {
		t.Errorf("notes.txt: mode %v size %d", a.Mode, a.Size)
	}
	sub, _, err := lookup(t, root, "sub")
	if err != nil {
		t.Fatal(err)
	}
	rd, _, err := lookup(t, sub, "test.log")
	if err != nil {
		t.Fatal(err)
	}
	if a := attrOf(t, rd); a.Mode != os.ModeDir|0o555 {
		t.Errorf("record directory mode %v", a.Mode)
	}
	ents, _ = listDir(t, rd)
	if len(ents) != 2+len(l.recs)+1 {
		t.Errorf("test.log lists %d entries, want %d", len(ents), 2+len(l.recs)+1)
	}
	rec, _, err := lookup(t, rd, "11")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := readAll(t, rec, 4096); err != nil || !bytes.Equal(got, l.recs[11]) {
		t.Errorf("sub/test.log/11: %v", err)
	}
	if _, _, err := lookup(t, root, "missing"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("missing: %v", err)
	}
}

func TestStatfs(t *testing.T) {
	_, _, root := fileTree(t, 1, fs.MountOptions{}, quietLogger())
	f := &FS{root: root}
	resp := &fuse.StatfsResponse{}
	if err := f.Statfs(context.Background(), &fuse.StatfsRequest{}, resp); err != nil {
		t.Fatal(err)
	}
	if resp.Bsize != 4096 || resp.Namelen != 255 || resp.Bavail != 0 {
		t.Errorf("statfs %+v", resp)
	}
}

func TestOptions(t *testing.T) {
	tr, _, _ := fileTree(t, 1, fs.MountOptions{}, quietLogger())
	for _, tc := range []struct {
		o    fs.MountOptions
		want int
	}{
		{fs.MountOptions{}, 5},
		{fs.MountOptions{AllowOther: true}, 7},
	} {
		if got := len(Options(tr, tc.o)); got != tc.want {
			t.Errorf("%+v: %d options, want %d", tc.o, got, tc.want)
		}
	}
	// A writable mount needs a writable tree.
	if _, err := Mount(t.TempDir(), tr, fs.MountOptions{ReadWrite: true}); err == nil || !strings.Contains(err.Error(), "ReadWrite") {
		t.Errorf("--rw over a read-only tree: %v", err)
	}
	if got, want := len(Options(tr, fs.MountOptions{ReadWrite: true})), 4; got != want {
		t.Errorf("--rw: %d options, want %d (no ro)", got, want)
	}
}

// fuseMode decides whether the in-process mount test runs: RECFS_TEST_FUSE
// "0" skips it, "1" requires it (a missing /dev/fuse or fusermount3 is a
// failure), "" runs it when both are present.
func fuseMode(t *testing.T) {
	t.Helper()
	mode := os.Getenv("RECFS_TEST_FUSE")
	if mode == "0" {
		t.Skip("RECFS_TEST_FUSE=0")
	}
	var missing []string
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, err.Error())
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) == 0 {
		return
	}
	if mode == "1" {
		t.Fatalf("RECFS_TEST_FUSE=1 but %s", strings.Join(missing, "; "))
	}
	t.Skipf("no FUSE: %s", strings.Join(missing, "; "))
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
	fuseMode(t)
	big := bytes.Repeat([]byte("big record "), 30000) // 330000 bytes: three 128 KiB reads
	l := writeLog(t, t.TempDir(), 500, big)
	tr, err := fs.NewFile(l.path, badSource{Source: openTable(t, l.path), bad: 5}, fs.Options{Logger: quietLogger()})
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
	if _, err := os.Stat(filepath.Join(dir, pollHackName)); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("%s after Mount: %v, want ENOENT", pollHackName, err)
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
	fuseMode(t)
	l := writeLog(t, t.TempDir(), 30)
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: quietLogger()})
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
	root, _ := NewFS(tree, fs.MountOptions{}).Root()
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
	_, _, root := fileTree(f, n, fs.MountOptions{}, quietLogger())
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
	_, l, root := fileTree(f, n, fs.MountOptions{}, quietLogger())
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
	_, l, root := fileTree(b, 5000, fs.MountOptions{}, quietLogger())
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
			_, _, root := fileTree(b, n, fs.MountOptions{}, quietLogger())
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
	fuseMode(t)
	l := writeLog(t, t.TempDir(), 5)
	tr, err := fs.NewFile(l.path, openTable(t, l.path), fs.Options{Logger: quietLogger()})
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
		c := config(fs.MountOptions{Debug: debug, Logger: lg})
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
