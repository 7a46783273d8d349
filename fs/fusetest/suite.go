package fusetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/recfs/recfs/fs"
)

// The tests of the suite. Each builds its own tree and driver.

const (
	regMode = syscall.S_IFREG | 0o444
	dirMode = syscall.S_IFDIR | 0o555
)

// fileDriver returns a driver over the tree of a MemSource of n records.
func (s *suite) fileDriver(t *testing.T, src *MemSource, o fs.MountOptions, to fs.Options) (*fs.Tree, Driver) {
	t.Helper()
	tr := FileTree(t, src, to)
	return tr, s.newDriver(t, tr, o)
}

func lookupOK(t *testing.T, d Driver, parent Node, name string) Entry {
	t.Helper()
	e, err := d.Lookup(parent, name)
	if err != nil {
		t.Fatalf("lookup %q: %v", name, err)
	}
	return e
}

// readAll opens n and reads it in requests of size bytes, the way the
// kernel does.
func readAll(t *testing.T, d Driver, n Node, size int) ([]byte, fs.OpenHints, error) {
	t.Helper()
	f, h, err := d.Open(n, os.O_RDONLY)
	if err != nil {
		return nil, h, err
	}
	defer f.Release()
	var out []byte
	for off := int64(0); ; {
		b, err := f.Read(off, size)
		if err != nil {
			return out, h, err
		}
		if len(b) == 0 {
			return out, h, nil
		}
		out = append(out, b...)
		off += int64(len(b))
	}
}

// testLookupAttr: records by padded and plain names, .recfs, and the
// names that do not exist; attributes as the tree has them, cached for
// the default hour.
func (s *suite) testLookupAttr(t *testing.T) {
	const n = 1000
	src := NewMemSource(n, -1, nil)
	tr, d := s.fileDriver(t, src, fs.MountOptions{}, fs.Options{})
	ra, err := d.Getattr(d.Root())
	if err != nil || ra.Mode != dirMode || ra.TTL != time.Hour || ra.Nlink != 2 {
		t.Errorf("root: %+v %v", ra, err)
	}
	for _, tc := range []struct {
		name string
		rec  int64 // record number, or -1 for ENOENT, -2 for .recfs
	}{
		{"000000", 0}, {"0", 0}, {"000042", 42}, {"42", 42}, {"000999", 999}, {"999", 999},
		{"001000", -1}, {"1000", -1}, {"0042", -1}, {"-1", -1}, {"nope", -1}, {"", -1},
		{"trailer", -1}, // no trailer
		{".recfs", -2},
	} {
		e, err := d.Lookup(d.Root(), tc.name)
		if tc.rec == -1 {
			if errno(err) != syscall.ENOENT {
				t.Errorf("lookup %q: %v, want ENOENT", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("lookup %q: %v", tc.name, err)
			continue
		}
		if e.EntryTTL != time.Hour || e.Attr.TTL != time.Hour {
			t.Errorf("lookup %q: entry %v attr %v, want an hour", tc.name, e.EntryTTL, e.Attr.TTL)
		}
		tn, err := tr.Lookup(context.Background(), tr.Root(), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		ta, err := tr.Getattr(context.Background(), tn)
		if err != nil {
			t.Fatal(err)
		}
		a := e.Attr
		if a.Ino != ta.Ino || a.Ino < 2 || a.Nlink != 1 || a.Mode != regMode || a.Size != uint64(ta.Size) {
			t.Errorf("lookup %q: %+v, tree %+v", tc.name, a, ta)
		}
		if tc.rec >= 0 && a.Size != uint64(len(Payload(tc.rec))) {
			t.Errorf("lookup %q: size %d, want %d", tc.name, a.Size, len(Payload(tc.rec)))
		}
		if ga, err := d.Getattr(e.Node); err != nil || ga.Ino != a.Ino || ga.Size != a.Size || ga.TTL != time.Hour {
			t.Errorf("getattr %q: %+v %v", tc.name, ga, err)
		}
	}
}

// testOneNodePerRecord: padded and plain names are one node and inode.
func (s *suite) testOneNodePerRecord(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(100, -1, nil), fs.MountOptions{}, fs.Options{})
	a := lookupOK(t, d, d.Root(), "000042")
	b := lookupOK(t, d, d.Root(), "42")
	if a.Node != b.Node || a.Attr.Ino != b.Attr.Ino {
		t.Errorf("000042 and 42 differ: %v/%d vs %v/%d", a.Node, a.Attr.Ino, b.Node, b.Attr.Ino)
	}
	c := lookupOK(t, d, d.Root(), "43")
	if c.Node == a.Node || c.Attr.Ino == a.Attr.Ino {
		t.Error("records 42 and 43 share a node")
	}
}

// testLookupInFile: a lookup below a file is ENOTDIR.
func (s *suite) testLookupInFile(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{}, fs.Options{})
	rec := lookupOK(t, d, d.Root(), "1")
	if _, err := d.Lookup(rec.Node, "x"); errno(err) != syscall.ENOTDIR {
		t.Errorf("lookup in a file: %v, want ENOTDIR", err)
	}
}

// testNegativeEntries: where the library caches failed lookups, a
// read-only mount caches them a second, a writable one not at all (the
// next close(2) may create the name).
func (s *suite) testNegativeEntries(t *testing.T) {
	if !s.caps.NegativeEntries {
		t.Skip("the library caches no failed lookup")
	}
	_, ro := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{}, fs.Options{})
	e, err := ro.Lookup(ro.Root(), "nope")
	if errno(err) != syscall.ENOENT || e.EntryTTL != time.Second {
		t.Errorf("read-only: %v, negative entry cached %v, want a second", err, e.EntryTTL)
	}
	_, rw := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{ReadWrite: true}, fs.Options{ReadWrite: true})
	e, err = rw.Lookup(rw.Root(), "3")
	if errno(err) != syscall.ENOENT || !uncached(e.EntryTTL) {
		t.Errorf("writable: %v, negative entry cached %v, want not at all", err, e.EntryTTL)
	}
}

// testTimeouts: given entry and attribute timeouts replace the hour.
func (s *suite) testTimeouts(t *testing.T) {
	for _, tc := range []struct{ entry, attr time.Duration }{
		{0, 0}, {time.Second, 2 * time.Second}, {5 * time.Minute, 0},
	} {
		t.Run(fmt.Sprint(tc.entry, tc.attr), func(t *testing.T) {
			_, d := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{EntryTimeout: tc.entry, AttrTimeout: tc.attr}, fs.Options{})
			e := lookupOK(t, d, d.Root(), "1")
			wantE, wantA := tc.entry, tc.attr
			if wantE == 0 {
				wantE = time.Hour
			}
			if wantA == 0 {
				wantA = time.Hour
			}
			a, err := d.Getattr(e.Node)
			if e.EntryTTL != wantE || e.Attr.TTL != wantA || err != nil || a.TTL != wantA {
				t.Errorf("entry %v attr %v getattr %v (%v), want %v %v", e.EntryTTL, e.Attr.TTL, a.TTL, err, wantE, wantA)
			}
		})
	}
}

// testReadDir: "." and "..", the records zero-padded to max(6,
// digits(n-1)) in order, then .recfs; every inode distinct and the one a
// lookup reports; the kernel may cache the listing.
func (s *suite) testReadDir(t *testing.T) {
	for _, n := range []int64{0, 1, 250, 1000, 1001} {
		t.Run(strconv.FormatInt(n, 10), func(t *testing.T) {
			_, d := s.fileDriver(t, NewMemSource(n, -1, nil), fs.MountOptions{}, fs.Options{})
			ents, h, err := d.ReadDir(d.Root())
			if err != nil {
				t.Fatal(err)
			}
			if !h.CacheDir {
				t.Errorf("record directory listed without CACHE_DIR: %+v", h)
			}
			ra, _ := d.Getattr(d.Root())
			if len(ents) < 2 || ents[0].Name != "." || ents[1].Name != ".." || ents[0].Ino != ra.Ino || ents[1].Ino != ra.Ino || !ents[0].Dir {
				t.Fatalf("listing starts %v (root inode %d)", ents[:min(2, len(ents))], ra.Ino)
			}
			ents = ents[2:]
			if int64(len(ents)) != n+1 {
				t.Fatalf("%d entries, want %d", len(ents), n+1)
			}
			seen := map[uint64]bool{}
			for i, e := range ents {
				want := fs.RecordName(int64(i), n)
				if int64(i) == n {
					want = fs.InfoName
				}
				if e.Name != want || e.Dir {
					t.Fatalf("entry %d: %q dir=%v, want file %q", i, e.Name, e.Dir, want)
				}
				if seen[e.Ino] {
					t.Fatalf("entry %d: inode %d repeated", i, e.Ino)
				}
				seen[e.Ino] = true
			}
			for _, i := range []int64{0, n / 2, n} {
				if e := lookupOK(t, d, d.Root(), ents[i].Name); e.Attr.Ino != ents[i].Ino {
					t.Errorf("%s: lookup inode %d, listing %d", ents[i].Name, e.Attr.Ino, ents[i].Ino)
				}
			}
		})
	}
}

// testReadDirAgain: a second listing gives the same entries.
func (s *suite) testReadDirAgain(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(20, -1, nil), fs.MountOptions{}, fs.Options{})
	a, _, err := d.ReadDir(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := d.ReadDir(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2+21 || !slices.Equal(a, b) {
		t.Errorf("first %d entries, second %d, equal %v", len(a), len(b), slices.Equal(a, b))
	}
}

// testRead: every record reads back whole in requests of any size; the
// kernel keeps record pages across opens and sends no FLUSH.
func (s *suite) testRead(t *testing.T) {
	const n = 300
	_, d := s.fileDriver(t, NewMemSource(n, -1, nil), fs.MountOptions{}, fs.Options{})
	for _, size := range []int{1, 4096, 128 << 10} {
		for i := range int64(n) {
			want := Payload(i)
			if size == 1 && len(want) > 1000 {
				continue // byte-at-a-time reads of long records prove nothing more
			}
			e := lookupOK(t, d, d.Root(), strconv.FormatInt(i, 10))
			got, h, err := readAll(t, d, e.Node, size)
			if err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("record %d read in %d-byte requests: %d bytes, want %d", i, size, len(got), len(want))
			}
			if !h.KeepCache || !h.NoFlush || h.DirectIO {
				t.Fatalf("record %d open hints %+v", i, h)
			}
		}
	}
}

// testReadPastEnd: a read past the end gives no bytes and no error.
func (s *suite) testReadPastEnd(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(10, -1, nil), fs.MountOptions{}, fs.Options{})
	e := lookupOK(t, d, d.Root(), "5")
	f, _, err := d.Open(e.Node, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	if b, err := f.Read(1<<40, 100); err != nil || len(b) != 0 {
		t.Errorf("read past the end: %d bytes, %v", len(b), err)
	}
}

// testInfoFile: .recfs reads whole, names the record count, and its size
// is what it holds.
func (s *suite) testInfoFile(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(302, -1, nil), fs.MountOptions{}, fs.Options{})
	e := lookupOK(t, d, d.Root(), fs.InfoName)
	text, _, err := readAll(t, d, e.Node, 4096)
	if err != nil || !strings.Contains(string(text), "records: 302\n") {
		t.Errorf(".recfs: %q %v", text, err)
	}
	if e.Attr.Size != uint64(len(text)) || e.Attr.Mode != regMode {
		t.Errorf(".recfs: size %d mode %o, read %d bytes", e.Attr.Size, e.Attr.Mode, len(text))
	}
}

// testTrailer: trailer/ is a directory listed after the records, and its
// 000000 holds the trailer.
func (s *suite) testTrailer(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(10, -1, []byte("TRAILER")), fs.MountOptions{}, fs.Options{})
	td := lookupOK(t, d, d.Root(), fs.TrailerName)
	if td.Attr.Mode != dirMode {
		t.Fatalf("trailer: mode %o", td.Attr.Mode)
	}
	ti := lookupOK(t, d, td.Node, "000000")
	if ti.Attr.Size != 7 || ti.Attr.Mode != regMode {
		t.Fatalf("trailer item: %+v", ti.Attr)
	}
	if b, _, err := readAll(t, d, ti.Node, 4096); err != nil || string(b) != "TRAILER" {
		t.Errorf("trailer: %q %v", b, err)
	}
	ents, _, err := d.ReadDir(d.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2+10+2 || ents[12].Name != fs.TrailerName || !ents[12].Dir || ents[13].Name != fs.InfoName {
		t.Errorf("listing: %d entries, tail %v", len(ents), ents[max(len(ents)-2, 0):])
	}
	if tents, _, err := d.ReadDir(td.Node); err != nil || len(tents) != 3 || tents[2].Name != "000000" || tents[2].Ino != ti.Attr.Ino {
		t.Errorf("trailer/ lists %v, %v", tents, err)
	}
}

// testReadErrorReported: a corrupt record's reads fail with EIO, logged
// once with its record and file offset; other records still read.
func (s *suite) testReadErrorReported(t *testing.T) {
	lg, hook := test.NewNullLogger()
	_, d := s.fileDriver(t, NewMemSource(10, 7, nil), fs.MountOptions{}, fs.Options{Logger: lg})
	e := lookupOK(t, d, d.Root(), "7")
	for range 3 {
		if _, _, err := readAll(t, d, e.Node, 4096); errno(err) != syscall.EIO {
			t.Fatalf("read of a corrupt record: %v, want EIO", err)
		}
	}
	if n := len(hook.AllEntries()); n != 1 {
		t.Fatalf("%d log lines for 3 failed reads, want 1", n)
	}
	if le := hook.LastEntry(); le.Level != logrus.ErrorLevel || le.Data["record"] != int64(7) || le.Data["file_offset"] != int64(BadOffset) {
		t.Errorf("log line %v %v", le.Level, le.Data)
	}
	e = lookupOK(t, d, d.Root(), "6")
	if got, _, err := readAll(t, d, e.Node, 4096); err != nil || !bytes.Equal(got, Payload(6)) {
		t.Errorf("record 6: %v", err)
	}
}

// testReadOnly: without --rw every change is EROFS.
func (s *suite) testReadOnly(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{}, fs.Options{})
	root := d.Root()
	rec := lookupOK(t, d, root, "1").Node
	for _, fl := range []int{os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_TRUNC, os.O_WRONLY | os.O_APPEND} {
		if _, _, err := d.Open(rec, fl); errno(err) != syscall.EROFS {
			t.Errorf("open with flags %#x: %v, want EROFS", fl, err)
		}
	}
	if _, _, _, err := d.Create(root, "new", os.O_WRONLY|os.O_CREATE); errno(err) != syscall.EROFS {
		t.Errorf("create: %v, want EROFS", err)
	}
	refused(t, d, syscall.EROFS, []change{
		{OpMkdir, root, "d", nil}, {OpMknod, root, "d", nil}, {OpUnlink, root, "1", nil}, {OpRmdir, root, "1", nil},
		{OpRename, root, "1", nil}, {OpSymlink, root, "s", nil}, {OpLink, root, "s", rec},
		{OpTruncate, nil, "", rec}, {OpSetxattr, nil, "user.x", rec}, {OpRemovexattr, nil, "user.x", rec},
	})
}

// change is one Driver.Change call.
type change struct {
	op     Op
	parent Node
	name   string
	target Node
}

// refused checks that each change fails with want.
func refused(t *testing.T, d Driver, want syscall.Errno, changes []change) {
	t.Helper()
	for _, c := range changes {
		if err := d.Change(c.op, c.parent, c.name, c.target); errno(err) != want {
			t.Errorf("%s %q: %v, want %v", c.op, c.name, err, want)
		}
	}
}

// testXattrsOff: without xattrs, getxattr is ENOTSUP and listxattr lists
// nothing.
func (s *suite) testXattrsOff(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{}, fs.Options{})
	if _, err := d.Getxattr(d.Root(), "user.recfs.format"); errno(err) != syscall.ENOTSUP {
		t.Errorf("getxattr: %v, want ENOTSUP", err)
	}
	if names, err := d.Listxattr(d.Root()); len(names) != 0 || (err != nil && errno(err) != syscall.ENOTSUP) {
		t.Errorf("listxattr: %q %v, want nothing", names, err)
	}
}

// testXattrs: user.recfs.* of record directories and records; other names
// are ENODATA.
func (s *suite) testXattrs(t *testing.T) {
	src := NewMemSource(50, -1, nil)
	_, d := s.fileDriver(t, src, fs.MountOptions{Xattrs: true}, fs.Options{})
	root := d.Root()
	rec := lookupOK(t, d, root, "17").Node
	for _, tc := range []struct {
		n     Node
		name  string
		value string
		err   syscall.Errno
	}{
		{root, "user.recfs.format", src.Info().Format.String(), 0},
		{root, "user.recfs.records", "50", 0},
		{root, "user.recfs.offset", "", syscall.ENODATA},
		{root, "security.selinux", "", syscall.ENODATA},
		{rec, "user.recfs.offset", strconv.FormatInt(src.Offset(17), 10), 0},
		{rec, "user.recfs.length", strconv.Itoa(len(Payload(17))), 0},
		{rec, "user.recfs.format", "", syscall.ENODATA},
		{rec, "system.posix_acl_access", "", syscall.ENODATA},
	} {
		v, err := d.Getxattr(tc.n, tc.name)
		if errno(err) != tc.err || string(v) != tc.value {
			t.Errorf("%v %s = %q, %v; want %q, %v", tc.n, tc.name, v, err, tc.value, tc.err)
		}
	}
	names, err := d.Listxattr(rec)
	if err != nil || !slices.Equal(names, []string{"user.recfs.offset", "user.recfs.length"}) {
		t.Errorf("record xattrs %q %v", names, err)
	}
	names, err = d.Listxattr(root)
	if err != nil || !slices.Contains(names, "user.recfs.format") || !slices.Contains(names, "user.recfs.records") {
		t.Errorf("directory xattrs %q %v", names, err)
	}
}

// testDirTree: a mirrored directory lists subdirectories, record files (as
// directories) and plain files; mirrored directories and plain files may
// change, so the kernel caches neither listing nor pages of them.
func (s *suite) testDirTree(t *testing.T) {
	dir := t.TempDir()
	recs := []string{"zero", "one", "two", "three"}
	WriteFiles(t, dir, map[string]string{
		"sub/test.log": FakeLog(recs...),
		"notes.txt":    "plain text\n",
	})
	tr := DirTree(t, dir, fs.Options{})
	d := s.newDriver(t, tr, fs.MountOptions{})
	root := d.Root()
	ents, h, err := d.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if h.CacheDir {
		t.Error("a mirrored directory may change, but was listed with CACHE_DIR")
	}
	var got []string
	for _, e := range ents {
		got = append(got, fmt.Sprintf("%s:%v", e.Name, e.Dir))
	}
	if want := []string{".:true", "..:true", "notes.txt:false", "sub:true"}; !slices.Equal(got, want) {
		t.Errorf("root lists %v, want %v", got, want)
	}
	notes := lookupOK(t, d, root, "notes.txt")
	text, h, err := readAll(t, d, notes.Node, 4096)
	if err != nil || string(text) != "plain text\n" {
		t.Errorf("notes.txt: %q %v", text, err)
	}
	if h.KeepCache && !s.caps.NoOpen {
		t.Error("a passed-through file may change, but was opened with KEEP_CACHE")
	}
	if notes.Attr.Mode != regMode || notes.Attr.Size != 11 || notes.Attr.TTL != fs.PlainAttrTimeout {
		t.Errorf("notes.txt: %+v", notes.Attr)
	}
	sub := lookupOK(t, d, root, "sub")
	if sub.Attr.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		t.Errorf("sub: mode %o", sub.Attr.Mode)
	}
	rd := lookupOK(t, d, sub.Node, "test.log")
	if rd.Attr.Mode != dirMode {
		t.Errorf("record directory mode %o", rd.Attr.Mode)
	}
	ents, h, err = d.ReadDir(rd.Node)
	if err != nil || len(ents) != 2+len(recs)+1 || !h.CacheDir {
		t.Errorf("test.log lists %d entries (%v, %+v), want %d", len(ents), err, h, 2+len(recs)+1)
	}
	rec := lookupOK(t, d, rd.Node, "3")
	if got, _, err := readAll(t, d, rec.Node, 4096); err != nil || string(got) != "three" {
		t.Errorf("sub/test.log/3: %q %v", got, err)
	}
	if _, err := d.Lookup(root, "missing"); errno(err) != syscall.ENOENT {
		t.Errorf("missing: %v", err)
	}
	// A source entry replaced by a symbolic link is not followed.
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub", "test.log"), filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(t, d, notes.Node, 4096); err == nil {
		t.Error("a file swapped for a symbolic link was read through it")
	}
	if _, err := d.Lookup(root, "notes.txt"); errno(err) != syscall.ENOENT {
		t.Errorf("lookup of a symbolic link: %v, want ENOENT (links are left out)", err)
	}
}

// testStatfs: a read-only file system with no free space, 4 KiB blocks.
func (s *suite) testStatfs(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(1, -1, nil), fs.MountOptions{}, fs.Options{})
	st, err := d.Statfs()
	if err != nil || st.Bsize != 4096 || st.Frsize != 4096 || st.NameLen != 255 {
		t.Errorf("statfs %+v %v", st, err)
	}
}

// testFollowDirectIO: a followed mount opens records past the page cache
// (a rewrite must not serve old pages) and answers FLUSH.
func (s *suite) testFollowDirectIO(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(10, -1, nil), fs.MountOptions{Follow: true}, fs.Options{})
	e := lookupOK(t, d, d.Root(), "3")
	f, h, err := d.Open(e.Node, os.O_RDONLY)
	if err != nil {
		t.Fatalf("open of a followed record: %v", err)
	}
	if !h.DirectIO || h.KeepCache {
		t.Errorf("followed record opened with %+v", h)
	}
	if b, err := f.Read(0, 1000); err != nil || !bytes.Equal(b, Payload(3)) {
		t.Errorf("read: %q %v", b, err)
	}
	if err := f.Flush(); err != nil {
		t.Errorf("flush of a followed record: %v", err)
	}
	if err := f.Release(); err != nil {
		t.Errorf("release: %v", err)
	}
}

// testWrite: a writable mount creates a pending file, appends it as one
// record at the flush close(2) waits for, and drops its name at release;
// what changes is not cached.
func (s *suite) testWrite(t *testing.T) {
	src := NewMemSource(0, -1, nil)
	_, d := s.fileDriver(t, src, fs.MountOptions{ReadWrite: true}, fs.Options{ReadWrite: true})
	root := d.Root()
	e, f, h, err := d.Create(root, "new.txt", os.O_WRONLY|os.O_CREATE)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !uncached(e.EntryTTL) || !uncached(e.Attr.TTL) {
		t.Errorf("pending file cached: entry %v attr %v", e.EntryTTL, e.Attr.TTL)
	}
	if h.NoFlush || !h.DirectIO || h.KeepCache {
		t.Errorf("write handle hints %+v: close must flush, reads must reach the tree", h)
	}
	// A flush before any write (a shell's dup+close) appends nothing.
	if err := f.Flush(); err != nil || src.Len() != 0 {
		t.Fatalf("early flush: %v, %d records", err, src.Len())
	}
	data := []byte("hello through the adapter")
	if n, err := f.Write(data, 0); err != nil || n != len(data) {
		t.Fatalf("write: %d, %v", n, err)
	}
	// cp -p's chmod of the pending file is accepted.
	if a, err := d.Setmode(e.Node, 0o600); err != nil || a.Size != uint64(len(data)) {
		t.Errorf("chmod of pending: %v, size %d", err, a.Size)
	}
	if err := f.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if src.Len() != 1 || !bytes.Equal(src.Record(0), data) {
		t.Fatalf("after flush: %d records", src.Len())
	}
	if err := f.Release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := d.Lookup(root, "new.txt"); errno(err) != syscall.ENOENT {
		t.Errorf("created name after release: %v", err)
	}
	if rec := lookupOK(t, d, root, "0"); rec.Attr.Size != uint64(len(data)) {
		t.Errorf("new record: size %d", rec.Attr.Size)
	}
	if a, err := d.Getattr(root); err != nil || !uncached(a.TTL) {
		t.Errorf("record dir attr cached %v (%v)", a.TTL, err)
	}
	if info := lookupOK(t, d, root, fs.InfoName); !uncached(info.Attr.TTL) {
		t.Errorf(".recfs attr cached %v", info.Attr.TTL)
	}
	if _, h, err := d.ReadDir(root); err != nil || h.CacheDir {
		t.Errorf("writable record dir listed with %+v (%v)", h, err)
	}
}

// testWriteRefusals: in a writable mount existing records and the fixed
// entries refuse every change with EPERM, and record names cannot be
// created.
func (s *suite) testWriteRefusals(t *testing.T) {
	_, d := s.fileDriver(t, NewMemSource(3, -1, nil), fs.MountOptions{ReadWrite: true}, fs.Options{ReadWrite: true})
	root := d.Root()
	rec := lookupOK(t, d, root, "0").Node
	if _, _, err := d.Open(rec, os.O_WRONLY); errno(err) != syscall.EPERM {
		t.Errorf("open record for writing: %v, want EPERM", err)
	}
	refused(t, d, syscall.EPERM, []change{
		{OpUnlink, root, "0", nil}, {OpTruncate, nil, "", rec}, {OpRename, root, "0", nil},
		{OpSetxattr, nil, "user.x", rec}, {OpMkdir, root, "d", nil},
	})
	for _, name := range []string{"7", "000001", fs.InfoName, fs.TrailerName} {
		if _, _, _, err := d.Create(root, name, os.O_WRONLY|os.O_CREATE); errno(err) != syscall.EPERM {
			t.Errorf("create %q: %v, want EPERM", name, err)
		}
	}
}
