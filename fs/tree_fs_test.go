package fs

import (
	"bufio"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/recfs/recfs/codec/codectest"
)

// fsOpener opens fake record files of a tree over an io/fs.FS.
type fsOpener struct{ names []string }

func (o *fsOpener) open(_ context.Context, name string, f iofs.File) (Records, error) {
	o.names = append(o.names, name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := f.(io.ReaderAt).ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	src := &fakeRecords{}
	sc := bufio.NewScanner(strings.NewReader(strings.TrimPrefix(string(b), fakeMagic)))
	for sc.Scan() {
		src.recs = append(src.recs, []byte(sc.Text()))
	}
	return src, nil
}

func TestFSTree(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := fstest.MapFS{
		"a.log":           {Data: []byte(fakeMagic + "one\ntwo\n"), Mode: 0o444, ModTime: mt},
		"notes.txt":       {Data: []byte("just text\n"), Mode: 0o444, ModTime: mt},
		"sub/deep/b.data": {Data: []byte(fakeMagic + "x\n"), Mode: 0o444, ModTime: mt},
	}
	op := &fsOpener{}
	tr, err := NewFSTree("s3://bucket/p/", m, op.open, Options{Detect: fakeDetect, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ents, err := iofs.ReadDir(tr.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name()+map[bool]string{true: "/", false: ""}[e.IsDir()])
	}
	if got, want := strings.Join(names, " "), "a.log/ notes.txt sub/"; got != want {
		t.Errorf("root lists %q, want %q", got, want)
	}
	if len(op.names) != 0 {
		t.Errorf("listing opened %v", op.names)
	}
	if err := fstest.TestFS(tr.FS(), "a.log/000000", "a.log/000001", "a.log/.recfs", "notes.txt", "sub/deep/b.data/000000"); err != nil {
		t.Fatal(err)
	}
	if got, _ := iofs.ReadFile(tr.FS(), "a.log/1"); string(got) != "two" {
		t.Errorf("a.log/1 = %q", got)
	}
	if got, _ := iofs.ReadFile(tr.FS(), "notes.txt"); string(got) != "just text\n" {
		t.Errorf("notes.txt = %q", got)
	}
	if strings.Join(op.names, " ") != "a.log sub/deep/b.data" {
		t.Errorf("opened %v, want each record file once", op.names)
	}
	ctx := context.Background()
	root := tr.Root()
	if _, err := tr.Mkdir(ctx, root, "new"); Errno(err) != syscall.EROFS {
		t.Errorf("mkdir: %v, want EROFS", err)
	}
	if _, _, err := tr.Create(ctx, root, "new"); Errno(err) != syscall.EROFS {
		t.Errorf("create: %v, want EROFS", err)
	}
	sub, err := tr.Lookup(ctx, root, "sub")
	if err != nil || sub.Kind != KindDir {
		t.Fatalf("lookup sub: %v %v", sub.Kind, err)
	}
	// A file replaced by one of another size and time is detected anew: a
	// record file that became plain text passes through.
	m["a.log"] = &fstest.MapFile{Data: []byte("now text"), Mode: 0o444, ModTime: mt.Add(time.Second)}
	n, err := tr.Lookup(ctx, root, "a.log")
	if err != nil || n.Kind != KindFile {
		t.Errorf("replaced a.log: kind %v, %v; want a plain file", n.Kind, err)
	}
	if _, err := tr.Lookup(ctx, root, "gone"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("lookup of a missing name: %v", err)
	}
}

// A record file that changed between its detection and its first use is
// not indexed: the tree reports it stale instead of showing the other
// version's records.
func TestFSTreeStaleRecordFile(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := fstest.MapFS{"a.log": {Data: []byte(fakeMagic + "one\n"), Mode: 0o444, ModTime: mt}}
	op := &fsOpener{}
	tr, err := NewFSTree("mem", m, op.open, Options{Detect: fakeDetect, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	n, err := tr.Lookup(ctx, tr.Root(), "a.log")
	if err != nil || n.Kind != KindRecordDir {
		t.Fatalf("lookup: %v %v", n.Kind, err)
	}
	m["a.log"] = &fstest.MapFile{Data: []byte(fakeMagic + "one\ntwo\n"), Mode: 0o444, ModTime: mt.Add(time.Second)}
	if _, err := tr.OpenDir(ctx, n); !errors.Is(err, ErrStale) {
		t.Errorf("listing a changed record file: %v, want ErrStale", err)
	}
	if len(op.names) != 0 {
		t.Errorf("opened %v", op.names)
	}
}
