package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/sirupsen/logrus/hooks/test"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

// newFileTree writes an empty placeholder file (for stat) and returns the
// tree of src over it.
func newFileTree(t testing.TB, src Records) (*Tree, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(p, []byte("placeholder"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := NewFile(p, src, Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return tr, p
}

func records(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = bytes.Repeat([]byte{byte('a' + i%26)}, i%7)
	}
	return out
}

func TestFileTreeFSTest(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  *fakeRecords
	}{
		{"empty", &fakeRecords{}},
		{"three", &fakeRecords{recs: records(3)}},
		{"trailer", &fakeRecords{recs: records(12), trailer: []byte("the trailer")}},
		{"empty-trailer", &fakeRecords{trailer: []byte{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newFileTree(t, tc.src)
			var want []string
			for i := range tc.src.recs {
				want = append(want, fmt.Sprintf("%06d", i))
			}
			want = append(want, ".recfs")
			if tc.src.trailer != nil {
				want = append(want, "trailer/000000")
			}
			if err := fstest.TestFS(tr.FS(), want...); err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.src.recs {
				got, err := iofs.ReadFile(tr.FS(), fmt.Sprintf("%06d", i))
				if err != nil || !bytes.Equal(got, r) {
					t.Errorf("record %d: %q, %v; want %q", i, got, err, r)
				}
			}
			if tc.src.trailer != nil {
				got, err := iofs.ReadFile(tr.FS(), "trailer/000000")
				if err != nil || !bytes.Equal(got, tc.src.trailer) {
					t.Errorf("trailer: %q, %v", got, err)
				}
			}
			ents, err := iofs.ReadDir(tr.FS(), ".")
			if err != nil || len(ents) != len(want) {
				t.Errorf("ReadDir: %d entries, %v", len(ents), err)
			}
		})
	}
}

func TestLookupNames(t *testing.T) {
	src := &fakeRecords{recs: records(100)}
	tr, _ := newFileTree(t, src)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		kind Kind
		n    int64
	}{
		{"000042", KindRecord, 42},
		{"42", KindRecord, 42},
		{"0", KindRecord, 0},
		{"000099", KindRecord, 99},
		{".recfs", KindInfo, 0},
		{"0042", 0, 0},
		{"100", 0, 0},
		{"000100", 0, 0},
		{"trailer", 0, 0}, // no trailer in this file
		{"x", 0, 0},
		{"..", 0, 0},
	} {
		n, err := tr.Lookup(ctx, tr.Root(), tc.name)
		if tc.kind == 0 {
			if Errno(err) != syscall.ENOENT {
				t.Errorf("Lookup(%q) = %+v, %v; want ENOENT", tc.name, n, err)
			}
			continue
		}
		if err != nil || n.Kind != tc.kind || n.N != tc.n {
			t.Errorf("Lookup(%q) = %+v, %v; want kind %d n %d", tc.name, n, err, tc.kind, tc.n)
		}
	}
	rec, _ := tr.Lookup(ctx, tr.Root(), "7")
	if _, err := tr.Lookup(ctx, rec, "x"); Errno(err) != syscall.ENOTDIR {
		t.Errorf("lookup under a file: %v", err)
	}
	if _, err := tr.Open(ctx, tr.Root()); Errno(err) != syscall.EISDIR {
		t.Errorf("open of a directory: %v", err)
	}
}

func TestAttrs(t *testing.T) {
	src := &fakeRecords{recs: records(20), trailer: []byte("tt")}
	tr, path := newFileTree(t, src)
	ctx := context.Background()
	fi, _ := os.Stat(path)
	root, err := tr.Getattr(ctx, tr.Root())
	if err != nil {
		t.Fatal(err)
	}
	if root.Mode != syscall.S_IFDIR|0o555 || !root.Mtime.Equal(fi.ModTime()) {
		t.Errorf("root attr %+v", root)
	}
	inos := map[uint64]string{root.Ino: "root"}
	for i := range src.recs {
		n, _ := tr.Lookup(ctx, tr.Root(), fmt.Sprint(i))
		a, err := tr.Getattr(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != int64(len(src.recs[i])) || a.Mode != syscall.S_IFREG|0o444 || !a.Mtime.Equal(fi.ModTime()) {
			t.Errorf("record %d attr %+v", i, a)
		}
		if prev, dup := inos[a.Ino]; dup {
			t.Errorf("record %d shares inode %d with %s", i, a.Ino, prev)
		}
		inos[a.Ino] = fmt.Sprint(i)
	}
	// The listing reports the same inode numbers as Getattr.
	d, err := tr.OpenDir(ctx, tr.Root())
	if err != nil {
		t.Fatal(err)
	}
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		n, err := tr.Lookup(ctx, tr.Root(), e.Name)
		if err != nil {
			t.Fatalf("listed %q does not look up: %v", e.Name, err)
		}
		a, _ := tr.Getattr(ctx, n)
		if a.Ino != e.Ino || a.Mode&syscall.S_IFMT != e.Mode {
			t.Errorf("%q: listed ino %d mode %o, attr ino %d mode %o", e.Name, e.Ino, e.Mode, a.Ino, a.Mode)
		}
	}
	// Same file, second tree: same inode numbers (stable across mounts).
	tr2, err := NewFile(path, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n2, _ := tr2.Lookup(ctx, tr2.Root(), "5")
	a2, _ := tr2.Getattr(ctx, n2)
	if inos[a2.Ino] != "5" {
		t.Errorf("inode of record 5 changed across trees: %d", a2.Ino)
	}
}

func TestDirSeek(t *testing.T) {
	src := &fakeRecords{recs: records(10)}
	tr, _ := newFileTree(t, src)
	d, _ := tr.OpenDir(context.Background(), tr.Root())
	var all []DirEntry
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		all = append(all, e)
	}
	if len(all) != 11 || all[10].Name != ".recfs" {
		t.Fatalf("listing %v", all)
	}
	for _, e := range all[:len(all)-1] {
		if err := d.Seek(e.Off); err != nil {
			t.Fatal(err)
		}
		next, ok := d.Next()
		if !ok || next.Off != e.Off+1 {
			t.Errorf("after seek to %d got %+v", e.Off, next)
		}
	}
	if err := d.Seek(100); err == nil {
		t.Error("seek past the end succeeded")
	}
}

func TestInfoAndXattrs(t *testing.T) {
	src := &fakeRecords{
		recs:    records(4),
		trailer: []byte("xyz"),
		header:  []index.HeaderEntry{{Key: "trailer", Value: true}, {Key: "name", Value: "a\nb"}, {Key: "n", Value: int64(-3)}},
		damage: []codec.Damage{
			{Off: 32768, Len: 32768, Reason: "checksum mismatch", Err: codec.ErrCorrupt},
			{Off: 98304, Len: 10, Reason: "truncated record", Err: codec.ErrTruncated},
			{Off: 98314, Len: 500, Reason: "stale data of a recycled log", Err: codec.ErrStale},
		},
	}
	tr, path := newFileTree(t, src)
	got, err := iofs.ReadFile(tr.FS(), ".recfs")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"format: leveldb\n", "records: 4\n", "bytes: 6\n", "trailer: 3 bytes\n",
		"header.trailer: true\n", `header.name: "a\nb"` + "\n", "header.n: -3\n",
		"damaged ranges: 2\n",
		`damage: offset=32768 length=32768 reason="checksum mismatch"` + "\n",
		`damage: offset=98304 length=10 reason="truncated record"` + "\n",
		`stale: offset=98314 length=500 reason="stale data of a recycled log"` + "\n",
		fmt.Sprintf("file: %q\n", path),
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf(".recfs lacks %q:\n%s", want, got)
		}
	}
	// The stale tail of a recycled log is the end of the log, not damage.
	if strings.Contains(string(got), "damage: offset=98314") {
		t.Errorf(".recfs lists the stale tail as damage:\n%s", got)
	}
	ctx := context.Background()
	xa, err := tr.Xattrs(ctx, tr.Root())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, x := range xa {
		m[x.Name] = string(x.Value)
	}
	for k, v := range map[string]string{"user.recfs.format": "leveldb", "user.recfs.records": "4",
		"user.recfs.header.trailer": "true", "user.recfs.header.name": "a\nb", "user.recfs.header.n": "-3"} {
		if m[k] != v {
			t.Errorf("xattr %s = %q, want %q", k, m[k], v)
		}
	}
	rec, _ := tr.Lookup(ctx, tr.Root(), "2")
	xa, _ = tr.Xattrs(ctx, rec)
	if len(xa) != 2 || string(xa[0].Value) != "1002" || string(xa[1].Value) != "2" {
		t.Errorf("record xattrs %q", xa)
	}
}

func TestReadErrorReported(t *testing.T) {
	bad := &codec.CorruptError{Format: codec.LevelDB, Off: 5000, Reason: "checksum mismatch", Err: codec.ErrCorrupt}
	src := &fakeRecords{recs: records(3), bad: map[int64]error{1: bad}}
	tr, path := newFileTree(t, src)
	lg, hook := test.NewNullLogger()
	tr.elog.log = lg
	ctx := context.Background()
	n, _ := tr.Lookup(ctx, tr.Root(), "1")
	h, err := tr.Open(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // logged once however often it fails
		_, err = h.ReadAt(make([]byte, 4), 2)
		if tr.Report(err) != syscall.EIO {
			t.Fatalf("errno of %v", err)
		}
	}
	var oe *OpError
	if !errors.As(err, &oe) || oe.Record != 1 || oe.Off != 2 || oe.Path != path {
		t.Errorf("error %v lacks context", err)
	}
	if len(hook.AllEntries()) != 1 {
		t.Fatalf("%d log entries, want 1", len(hook.AllEntries()))
	}
	e := hook.LastEntry()
	if e.Data["record"] != int64(1) || e.Data["offset"] != int64(2) || e.Data["file"] != path || e.Data["file_offset"] != int64(5000) {
		t.Errorf("log fields %v", e.Data)
	}
	tr.Report(iofs.ErrNotExist)
	if len(hook.AllEntries()) != 1 {
		t.Error("ENOENT was logged")
	}
}

// writeTree creates files under dir: names ending in "/" are directories;
// contents starting with fakeMagic are record files.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDirTree(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.log":           fakeMagic + "one\ntwo\n",
		"notes.txt":       "just text\n",
		"sub/deep/b.data": fakeMagic + "x\n",
		"sub/empty/":      "",
		"zero":            "",
	})
	if err := os.Symlink("a.log", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("hide=%v", hide), func(t *testing.T) {
			op := &fakeOpener{}
			tr, err := NewDir(dir, Options{Open: op.open, Detect: fakeDetect, HideOther: hide, Logger: codectest.QuietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			want := "a.log:true notes.txt:false sub:true zero:false"
			if hide {
				want = "a.log:true sub:true"
			}
			if got := rootListing(t, tr); got != want {
				t.Errorf("root lists %v, want %v", got, want)
			}
			if op.opens != 0 {
				t.Errorf("listing the root indexed %d files", op.opens)
			}
			files := []string{"a.log/000000", "a.log/000001", "a.log/.recfs", "sub/deep/b.data/000000", "sub/deep/b.data/.recfs"}
			if !hide {
				files = append(files, "notes.txt", "zero")
			}
			if err := fstest.TestFS(tr.FS(), files...); err != nil {
				t.Fatal(err)
			}
			if op.opens != 2 {
				t.Errorf("%d record files indexed, want 2", op.opens)
			}
			got, _ := iofs.ReadFile(tr.FS(), "a.log/1")
			if string(got) != "two" {
				t.Errorf("a.log/1 = %q", got)
			}
			if !hide {
				got, _ = iofs.ReadFile(tr.FS(), "notes.txt")
				if string(got) != "just text\n" {
					t.Errorf("notes.txt = %q", got)
				}
				fi, _ := iofs.Stat(tr.FS(), "notes.txt")
				if fi.Mode().Perm() != 0o444 {
					t.Errorf("notes.txt mode %v", fi.Mode())
				}
			}
			if _, err := iofs.Stat(tr.FS(), "link"); !errors.Is(err, iofs.ErrNotExist) {
				t.Errorf("symlink: %v", err)
			}
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDirTreeIndexFailure(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.log": fakeMagic + "r\n"})
	calls := 0
	fail := func(context.Context, SourceFile) (Records, error) {
		calls++
		return nil, &codec.CorruptError{Format: codec.LevelDB, Off: 0, Reason: "strict", Err: codec.ErrCorrupt}
	}
	tr, _ := NewDir(dir, Options{Open: fail, Detect: fakeDetect, Logger: codectest.QuietLogger()})
	ctx := context.Background()
	n, err := tr.Lookup(ctx, tr.Root(), "a.log")
	if err != nil || n.Kind != KindRecordDir {
		t.Fatalf("lookup: %+v %v", n, err)
	}
	for range 2 {
		if _, err := tr.Lookup(ctx, n, "0"); Errno(err) != syscall.EIO {
			t.Errorf("lookup in a broken record file: %v", err)
		}
	}
	if calls != 1 {
		t.Errorf("index attempted %d times", calls)
	}
}

func TestInodesDistinct(t *testing.T) {
	seen := make(map[uint64]bool, 300000)
	for f := uint64(0); f < 3; f++ {
		key := fileKey(f, 100+f)
		for kind := uint8(inoKindPlain); kind <= inoKindInfo; kind++ {
			for n := int64(0); n < 20000; n++ {
				v := makeIno(key, kind, n)
				if v < 2 || seen[v] {
					t.Fatalf("inode %d repeats or is reserved", v)
				}
				seen[v] = true
			}
		}
	}
}

// TestRecordInodesAscend: record n+1's inode number is record n's plus
// one, so that readers that sort a large directory by inode number (GNU
// fts: grep -r, find) read its records in file order.
func TestRecordInodesAscend(t *testing.T) {
	src := &fakeRecords{recs: records(30000)}
	tr, _ := newFileTree(t, src)
	d, _ := tr.OpenDir(context.Background(), tr.Root())
	var prev uint64
	recs := 0
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		if e.Name == InfoName {
			continue
		}
		if recs > 0 && e.Ino != prev+1 {
			t.Fatalf("record %s has inode %d after %d: inode order is not record order", e.Name, e.Ino, prev)
		}
		prev = e.Ino
		recs++
	}
	if recs != 30000 {
		t.Fatalf("listed %d records", recs)
	}
}

func TestSortedListing(t *testing.T) {
	// Zero padding makes byte order equal record order, which is what ls and
	// shell globs rely on.
	src := &fakeRecords{recs: records(1200)}
	tr, _ := newFileTree(t, src)
	d, _ := tr.OpenDir(context.Background(), tr.Root())
	var names []string
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		if e.Name != InfoName {
			names = append(names, e.Name)
		}
	}
	if !sort.StringsAreSorted(names) || len(names) != 1200 {
		t.Errorf("listing not in order (%d names)", len(names))
	}
}

// seqRecords numbers its records 1000, 1002, 1004, ... (Kafka offsets
// with gaps).
type seqRecords struct{ fakeRecords }

func (s *seqRecords) BySeq(seq int64) (int64, bool) {
	if seq < 1000 || seq%2 != 0 || (seq-1000)/2 >= s.Len() {
		return 0, false
	}
	return (seq - 1000) / 2, true
}

// TestLookupSeq: "@N" finds the record its format numbers N, also through
// a decoded view, and is never listed; other "@" names are not found.
func TestLookupSeq(t *testing.T) {
	t.Parallel()
	src := &seqRecords{fakeRecords{recs: records(10)}}
	for _, s := range []Records{src, View(src, nil, "raw")} {
		tr, _ := newFileTree(t, s)
		ctx := context.Background()
		for name, want := range map[string]int64{"@1000": 0, "@1018": 9, "@1001": -1, "@1020": -1, "@01000": -1, "@": -1, "@-2": -1, "@x": -1} {
			n, err := tr.Lookup(ctx, tr.Root(), name)
			switch {
			case want < 0 && Errno(err) != syscall.ENOENT:
				t.Errorf("Lookup(%q) = %+v, %v; want ENOENT", name, n, err)
			case want >= 0 && (err != nil || n.Kind != KindRecord || n.N != want):
				t.Errorf("Lookup(%q) = %+v, %v; want record %d", name, n, err, want)
			}
		}
		ents, err := iofs.ReadDir(tr.FS(), ".")
		if err != nil || len(ents) != 11 {
			t.Fatalf("listing: %d entries, %v", len(ents), err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), SeqPrefix) {
				t.Fatalf("listing shows %q", e.Name())
			}
		}
	}
	if _, ok := lookupSeq(&fakeRecords{recs: records(3)}, "@1"); ok {
		t.Error("a source without numbers found @1")
	}
}

// TestDirTreeEmptyRecord: with EmptyRecord, an empty file of a name it
// accepts (a Kafka segment just rolled) is a record directory; other
// empty files stay plain files.
func TestDirTreeEmptyRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"seg.log": "", "zero": ""})
	op := &fakeOpener{}
	tr, err := NewDir(dir, Options{Open: op.open, Detect: fakeDetect, Logger: codectest.QuietLogger(),
		EmptyRecord: func(name string) bool { return name == "seg.log" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := rootListing(t, tr); got != "seg.log:true zero:false" {
		t.Errorf("root lists %s", got)
	}
}

// rootListing lists the root of tr as "name:isdir" words.
func rootListing(t *testing.T, tr *Tree) string {
	t.Helper()
	ents, err := iofs.ReadDir(tr.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.IsDir()))
	}
	return strings.Join(names, " ")
}
