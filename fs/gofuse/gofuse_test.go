package gofuse

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/index"
)

// memSource is in-memory fs.Records whose record i is payload(i).
type memSource struct {
	n       int64
	bad     int64 // record whose reads fail, or -1
	trailer []byte
}

func payload(i int64) []byte { return []byte(fmt.Sprintf("record %d\n", i)) }

func (m *memSource) Len() int64           { return m.n }
func (m *memSource) Size(n int64) int64   { return int64(len(payload(n))) }
func (m *memSource) Offset(n int64) int64 { return n * 100 }
func (m *memSource) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n == m.bad {
		return 0, &codec.CorruptError{Format: codec.LevelDB, Off: n * 100, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	}
	return bytes.NewReader(payload(n)).ReadAt(p, off)
}
func (m *memSource) HasTrailer() bool   { return m.trailer != nil }
func (m *memSource) TrailerSize() int64 { return int64(len(m.trailer)) }
func (m *memSource) ReadTrailerAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m.trailer).ReadAt(p, off)
}
func (m *memSource) Header() []index.HeaderEntry { return nil }
func (m *memSource) Damage() []codec.Damage      { return nil }
func (m *memSource) Info() index.Info            { return index.Info{Format: codec.LevelDB, Records: m.n} }
func (m *memSource) Close() error                { return nil }

func newTree(t testing.TB, src fs.Records) *fs.Tree {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src.log")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := fs.NewFile(p, src, fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestNodes drives the go-fuse bridge directly, without a kernel.
func TestNodes(t *testing.T) {
	tr := newTree(t, &memSource{n: 1000, bad: 7, trailer: []byte("TRAILER")})
	o := fs.MountOptions{}
	raw := rawFS(newRoot(tr, o), mountOptions(tr, o))
	hdr := func(id uint64) fuse.InHeader { return fuse.InHeader{NodeId: id} }

	lookup := func(parent uint64, name string) (fuse.EntryOut, fuse.Status) {
		var out fuse.EntryOut
		h := hdr(parent)
		st := raw.Lookup(nil, &h, name, &out)
		if st == fuse.OK && out.NodeId == 0 {
			// A negative entry: ENOENT cached for NegativeTimeout.
			if out.EntryTimeout() != time.Second {
				t.Errorf("negative entry for %q cached %v", name, out.EntryTimeout())
			}
			st = fuse.ENOENT
		}
		return out, st
	}
	for _, tc := range []struct {
		name string
		st   fuse.Status
		size uint64
	}{
		{"000042", fuse.OK, uint64(len(payload(42)))},
		{"42", fuse.OK, uint64(len(payload(42)))},
		{"000999", fuse.OK, uint64(len(payload(999)))},
		{"001000", fuse.ENOENT, 0},
		{"0042", fuse.ENOENT, 0},
		{"nope", fuse.ENOENT, 0},
	} {
		out, st := lookup(1, tc.name)
		if st != tc.st {
			t.Errorf("lookup %q: %v, want %v", tc.name, st, tc.st)
			continue
		}
		if st != fuse.OK {
			continue
		}
		if out.Size != tc.size || out.Mode != syscall.S_IFREG|0o444 {
			t.Errorf("lookup %q: size %d mode %o", tc.name, out.Size, out.Mode)
		}
		if out.EntryTimeout() != time.Hour || out.AttrTimeout() != time.Hour {
			t.Errorf("lookup %q: timeouts %v %v", tc.name, out.EntryTimeout(), out.AttrTimeout())
		}
	}
	// Padded and unpadded names are one inode.
	a, _ := lookup(1, "000042")
	b, _ := lookup(1, "42")
	if a.NodeId != b.NodeId || a.Ino != b.Ino {
		t.Errorf("000042 and 42 differ: %d/%d vs %d/%d", a.NodeId, a.Ino, b.NodeId, b.Ino)
	}

	// A read-only mount answers OPEN with ENOSYS (the kernel then opens
	// files without asking) and FLUSH too; reads come without a handle.
	open := func(id uint64) (fuse.OpenOut, fuse.Status) {
		var out fuse.OpenOut
		st := raw.Open(nil, &fuse.OpenIn{InHeader: hdr(id), Flags: syscall.O_RDONLY}, &out)
		return out, st
	}
	if _, st := open(a.NodeId); st != fuse.ENOSYS {
		t.Errorf("open of a record of a read-only mount: %v, want ENOSYS (no-open)", st)
	}
	buf := make([]byte, 1<<20)
	res, st := raw.Read(nil, &fuse.ReadIn{InHeader: hdr(a.NodeId), Size: uint32(len(buf))}, buf)
	if st != fuse.OK {
		t.Fatal(st)
	}
	got, _ := res.Bytes(buf)
	if !bytes.Equal(got, payload(42)) {
		t.Errorf("read %q, want %q", got, payload(42))
	}
	if st := raw.Flush(nil, &fuse.FlushIn{InHeader: hdr(a.NodeId)}); st != fuse.ENOSYS {
		t.Errorf("flush of a read-only mount: %v, want ENOSYS (no-flush)", st)
	}

	// A corrupt record's read fails with EIO.
	bad, _ := lookup(1, "7")
	if _, st := raw.Read(nil, &fuse.ReadIn{InHeader: hdr(bad.NodeId), Size: 100}, buf); st != fuse.EIO {
		t.Errorf("read of corrupt record: %v", st)
	}
	// .recfs and the trailer read without a handle too.
	info, _ := lookup(1, ".recfs")
	if res, st := raw.Read(nil, &fuse.ReadIn{InHeader: hdr(info.NodeId), Size: 4096}, buf); st != fuse.OK {
		t.Errorf("read of .recfs: %v", st)
	} else if b, _ := res.Bytes(buf); len(b) == 0 || uint64(len(b)) != info.Size {
		t.Errorf(".recfs: read %d bytes, size %d", len(b), info.Size)
	}
	// Writes are refused.
	if st := raw.Open(nil, &fuse.OpenIn{InHeader: hdr(a.NodeId), Flags: syscall.O_WRONLY}, &fuse.OpenOut{}); st != fuse.Status(syscall.EROFS) {
		t.Errorf("open for write: %v", st)
	}

	// List the whole directory in 4 KiB pages.
	var dout fuse.OpenOut
	if st := raw.OpenDir(nil, &fuse.OpenIn{InHeader: hdr(1)}, &dout); st != fuse.OK {
		t.Fatal(st)
	}
	if dout.OpenFlags&fuse.FOPEN_CACHE_DIR == 0 {
		t.Errorf("opendir flags %x lack CACHE_DIR", dout.OpenFlags)
	}
	var names []string
	off := uint64(0)
	for {
		page := make([]byte, 4096)
		l := fuse.NewDirEntryList(page, off)
		if st := raw.ReadDir(nil, &fuse.ReadIn{InHeader: hdr(1), Fh: dout.Fh, Offset: off, Size: 4096}, l); st != fuse.OK {
			t.Fatal(st)
		}
		ents, err := fuse.ParseDirEntries(l.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			names = append(names, e.Name)
			off = e.Off
		}
	}
	raw.ReleaseDir(&fuse.ReleaseIn{InHeader: hdr(1), Fh: dout.Fh})
	if len(names) != 1004 || names[0] != "." || names[1] != ".." || names[2] != "000000" || names[1001] != "000999" || names[1002] != "trailer" || names[1003] != ".recfs" {
		t.Errorf("listing: %d names, first %q, tail %q", len(names), names[0], names[len(names)-2:])
	}

	// trailer/000000 holds the trailer.
	td, st := lookup(1, "trailer")
	if st != fuse.OK || td.Mode != syscall.S_IFDIR|0o555 {
		t.Fatalf("trailer: %v %o", st, td.Mode)
	}
	ti, st := lookup(td.NodeId, "000000")
	if st != fuse.OK || ti.Size != 7 {
		t.Fatalf("trailer item: %v size %d", st, ti.Size)
	}
	if res, st := raw.Read(nil, &fuse.ReadIn{InHeader: hdr(ti.NodeId), Size: 4096}, buf); st != fuse.OK {
		t.Errorf("read of the trailer: %v", st)
	} else if b, _ := res.Bytes(buf); string(b) != "TRAILER" {
		t.Errorf("trailer: %q", b)
	}
}

// mountTree mounts tr read-only on a new directory; the mount ends with the
// test (detached if a clean unmount fails).
func mountTree(t *testing.T, tr *fs.Tree) (fs.Server, string) {
	t.Helper()
	dir := t.TempDir()
	srv, err := Mount(dir, tr, fs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return srv, dir
}

// TestMount mounts a tree in-process and reads it through the kernel.
func TestMount(t *testing.T) {
	fusetest.NeedFUSE(t)
	tr := newTree(t, &memSource{n: 300, bad: 5})
	srv, dir := mountTree(t, tr)
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if !strings.Contains(string(mi), " "+dir+" ") || !strings.Contains(string(mi), "fuse.recfs") {
		t.Errorf("mount of %s not listed as fuse.recfs", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 301 {
		t.Fatalf("ReadDir: %d, %v", len(ents), err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "123"))
	if err != nil || !bytes.Equal(got, payload(123)) {
		t.Errorf("read 123: %q %v", got, err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, "000005")); !errors.Is(err, syscall.EIO) {
		t.Errorf("read of a corrupt record: %v", err)
	}
	if _, err := os.Create(filepath.Join(dir, "new")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("create: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, ".recfs"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		found = found || sc.Text() == "records: 300"
	}
	f.Close()
	if !found {
		t.Error(".recfs lacks the record count")
	}
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
}

// TestRecordsMakeNoNodes: stat-ing thousands of records through a real
// mount makes no go-fuse node per record (the server keeps nothing per
// record inode the kernel holds), and the records read right afterwards.
func TestRecordsMakeNoNodes(t *testing.T) {
	fusetest.NeedFUSE(t)
	tr := newTree(t, &memSource{n: 5000, bad: -1})
	srv, dir := mountTree(t, tr)
	m := srv.(*server).m
	for i := range 3000 {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.live.Load(); got > 2 {
		t.Errorf("%d go-fuse nodes alive after stat of 3000 records, want none per record", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "000007")); err != nil || !bytes.Equal(b, payload(7)) {
		t.Errorf("read of record 7: %q %v", b, err)
	}
	// The kernel's references hold the record file; once it forgets
	// them all, nothing is held.
	d := m.records.dir(fuse.FUSE_ROOT_ID)
	d.refMu.Lock()
	refs := d.refs
	d.refMu.Unlock()
	if refs == 0 {
		t.Errorf("no kernel references counted after 3000 lookups")
	}
}

// BenchmarkLookupRead measures a lookup and a handle-less (no-open) read
// of one record through the bridge, without a kernel.
func BenchmarkLookupRead(b *testing.B) {
	tr := newTree(b, &memSource{n: 1 << 20, bad: -1})
	o := fs.MountOptions{}
	raw := rawFS(newRoot(tr, o), mountOptions(tr, o))
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(payload(123456))))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var out fuse.EntryOut
		h := fuse.InHeader{NodeId: 1}
		if st := raw.Lookup(nil, &h, fmt.Sprint(123456+i%1000), &out); st != fuse.OK {
			b.Fatal(st)
		}
		raw.Read(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: out.NodeId}, Size: 4096}, buf)
		raw.Forget(out.NodeId, 1)
	}
}

// TestAllowOtherOptions: other users are let in only with the kernel
// checking the permission bits the tree shows (default_permissions).
func TestAllowOtherOptions(t *testing.T) {
	tr := newTree(t, &memSource{n: 1})
	for _, allow := range []bool{false, true} {
		o := mountOptions(tr, fs.MountOptions{AllowOther: allow})
		if o.MountOptions.AllowOther != allow || slices.Contains(o.MountOptions.Options, "default_permissions") != allow {
			t.Errorf("AllowOther %v: allow_other %v, options %q", allow, o.MountOptions.AllowOther, o.MountOptions.Options)
		}
	}
}

// TestPlusListingEntries: READDIRPLUS of a record directory hands out
// every record with its entry (node ID = inode number, attributes), makes
// no go-fuse node for them, gives the other entries by name alone, and
// resumes right at any offset the kernel asks for.
func TestPlusListingEntries(t *testing.T) {
	tr := newTree(t, &memSource{n: 100, bad: -1, trailer: []byte("T")})
	o := fs.MountOptions{}
	root := newRoot(tr, o)
	m := root.(*node).m
	raw := rawFS(root, mountOptions(tr, o))
	list := func(off uint64, size int) []fuse.DirEntry {
		var dout fuse.OpenOut
		if st := raw.OpenDir(nil, &fuse.OpenIn{InHeader: fuse.InHeader{NodeId: 1}}, &dout); st != fuse.OK {
			t.Fatal(st)
		}
		defer raw.ReleaseDir(&fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: dout.Fh})
		var all []fuse.DirEntry
		for {
			l := fuse.NewDirEntryList(make([]byte, size), off)
			if st := raw.ReadDirPlus(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: dout.Fh, Offset: off, Size: uint32(size)}, l); st != fuse.OK {
				t.Fatal(st)
			}
			ents, err := parsePlus(l.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				return all
			}
			for _, e := range ents {
				all = append(all, e.DirEntry)
				off = e.Off
				rec, isRec := fs.ParseRecordName(e.Name, 100)
				switch {
				case isRec && e.Name != "." && e.Name != "..":
					if e.NodeId != e.Ino || e.Attr.Size != uint64(len(payload(rec))) || e.Attr.Ino != e.Ino {
						t.Errorf("entry %q: node %d ino %d size %d", e.Name, e.NodeId, e.Attr.Ino, e.Attr.Size)
					}
					var out fuse.AttrOut
					if st := raw.GetAttr(nil, &fuse.GetAttrIn{InHeader: fuse.InHeader{NodeId: e.NodeId}}, &out); st != fuse.OK || out.Size != e.Attr.Size {
						t.Errorf("getattr of listed %q: %v size %d", e.Name, st, out.Size)
					}
				case e.NodeId != 0:
					t.Errorf("entry %q came with node %d, want the name alone", e.Name, e.NodeId)
				}
			}
		}
	}
	all := list(0, 1024)
	if len(all) != 104 || all[2].Name != "000000" || all[101].Name != "000099" || all[102].Name != "trailer" || all[103].Name != ".recfs" {
		t.Fatalf("listing of 100 records: %d entries", len(all))
	}
	if got := m.live.Load(); got != 0 {
		t.Errorf("%d go-fuse nodes made by READDIRPLUS of 100 records, want 0", got)
	}
	// Resuming at an entry's offset continues behind it.
	rest := list(all[50].Off, 512)
	if len(rest) != 53 || rest[0].Name != all[51].Name {
		t.Errorf("listing from offset %d: %d entries, first %q, want 53 from %q", all[50].Off, len(rest), rest[0].Name, all[51].Name)
	}
}

// plusEntry is one READDIRPLUS entry.
type plusEntry struct {
	fuse.DirEntry
	fuse.EntryOut
}

// parsePlus parses a READDIRPLUS reply: entry, dirent, name, padding.
func parsePlus(b []byte) ([]plusEntry, error) {
	const entrySize = int(unsafe.Sizeof(fuse.EntryOut{}))
	var out []plusEntry
	for len(b) > 0 {
		if len(b) < entrySize+24 {
			return nil, fmt.Errorf("short READDIRPLUS entry: %d bytes", len(b))
		}
		var e plusEntry
		e.EntryOut = *(*fuse.EntryOut)(unsafe.Pointer(&b[0]))
		d := b[entrySize:]
		e.Ino = binary.LittleEndian.Uint64(d[0:])
		e.Off = binary.LittleEndian.Uint64(d[8:])
		nameLen := int(binary.LittleEndian.Uint32(d[16:]))
		e.Mode = binary.LittleEndian.Uint32(d[20:]) << 12
		e.Name = string(d[24 : 24+nameLen])
		out = append(out, e)
		n := entrySize + (24+nameLen+7)&^7
		b = b[n:]
	}
	return out, nil
}

// TestPlusListingLean: past leanAfter record entries handed out since the
// last request about any record, listings give names alone (node ID 0);
// a request about a record (the kernel using what it was given) re-arms
// the count. So ls -f of a huge directory builds no kernel inode per name,
// while readers that use their entries keep getting them.
func TestPlusListingLean(t *testing.T) {
	for _, c := range []struct {
		name      string
		use       bool // a GETATTR of a listed record after each page
		min, max  int
		leanAfter int64
	}{
		{"unused", false, 30, 30, 30},
		{"used", true, 100, 100, 30},
		{"small directory", false, 100, 100, 1 << 17},
	} {
		tr := newTree(t, &memSource{n: 100, bad: -1})
		o := fs.MountOptions{}
		raw := rawFS(newRoot(tr, o), mountOptions(tr, o))
		raw.leanAfter = c.leanAfter
		var dout fuse.OpenOut
		if st := raw.OpenDir(nil, &fuse.OpenIn{InHeader: fuse.InHeader{NodeId: 1}}, &dout); st != fuse.OK {
			t.Fatal(st)
		}
		withEntry, names := 0, 0
		for off := uint64(0); ; {
			l := fuse.NewDirEntryList(make([]byte, 1024), off)
			if st := raw.ReadDirPlus(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: dout.Fh, Offset: off, Size: 1024}, l); st != fuse.OK {
				t.Fatal(st)
			}
			ents, err := parsePlus(l.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) == 0 {
				break
			}
			var last uint64
			for _, e := range ents {
				off = e.Off
				if _, ok := fs.ParseRecordName(e.Name, 100); !ok || e.Name == "." || e.Name == ".." {
					continue
				}
				names++
				if e.NodeId != 0 {
					withEntry++
					last = e.NodeId
				}
			}
			if c.use && last != 0 {
				var out fuse.AttrOut
				if st := raw.GetAttr(nil, &fuse.GetAttrIn{InHeader: fuse.InHeader{NodeId: last}}, &out); st != fuse.OK {
					t.Fatal(st)
				}
			}
		}
		raw.ReleaseDir(&fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: dout.Fh})
		if names != 100 || withEntry < c.min || withEntry > c.max {
			t.Errorf("%s: %d of %d records listed with entries, want %d to %d", c.name, withEntry, names, c.min, c.max)
		}
	}
}
