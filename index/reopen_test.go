package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/recordio"
)

// Tests of what a writable or followed table does when its path is
// reopened, or when it gets a descriptor it cannot write through.

// TestRefreshNeverReopensThroughSymlink: a read-only table without
// a reopen function whose path was replaced by a symbolic link does not switch
// to the link's target on Refresh, as a writable one does not.
func TestRefreshNeverReopensThroughSymlink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	recfile.WriteLog(t, path, codectest.Records(2, 10, 'a'))
	tb, err := Open(ctx, path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	target := filepath.Join(dir, "target.log")
	recfile.WriteLog(t, target, codectest.Records(5, 10, 'z'))
	if err := os.Rename(path, filepath.Join(dir, "moved.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Refresh(ctx)
	if err == nil || tb.Len() != 2 {
		t.Fatalf("refresh through a planted symlink: %v, %d records (want an error, 2)", err, tb.Len())
	}
}

// TestRefreshOntoTornFileThroughReopen: a writable table whose Reopen
// gives read-only descriptors (a --rw directory mount) switches to a
// replacing recordio file that ends in a torn tail: the repair is left to
// the next append, which holds the lock and a writable descriptor, rather
// than failing every refresh.
func TestRefreshOntoTornFileThroughReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.rio")
	recfile.WriteRIO(t, path, codectest.Records(2, 10, 'a'), recordio.WriterOptions{})
	o := Options{CacheDir: "-", Writable: true}
	reopen := func() (*os.File, error) { return os.Open(path) }
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := openFile(ctx, f, path, reopen, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	next := filepath.Join(dir, "next.rio")
	recfile.WriteRIO(t, next, codectest.Records(5, 10, 'b'), recordio.WriterOptions{})
	torn, err := os.OpenFile(next, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := os.ReadFile(next)
	torn.Write(tornOf(t, nb, 100)) // a crashed append's first bytes
	torn.Close()
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Refresh(ctx); err != nil {
		t.Fatalf("refresh onto the replacing file: %v", err)
	}
	if tb.Len() != 5 {
		t.Fatalf("%d records after the refresh, want 5", tb.Len())
	}
	if _, err := tb.Append(ctx, [][]byte{[]byte("c")}, AppendOptions{}); err != nil {
		t.Fatalf("append after the refresh: %v", err)
	}
	if got := allRecords(t, tb); len(got) != 6 || got[5] != "c" {
		t.Fatalf("records after the append: %q", got)
	}
}

// TestWritableOpenOfReadOnlyDescriptor: a writable table made from a
// descriptor it cannot write through (a file recfs may not write) opens,
// torn leveldb tail and all, and leaves the file as it is: the repair is
// the next append's.
func TestWritableOpenOfReadOnlyDescriptor(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "torn.log")
	torn, _ := tornLog(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := openFile(ctx, f, path, nil, Options{CacheDir: t.TempDir(), Writable: true})
	if err != nil {
		f.Close()
		t.Fatalf("writable open of a read-only descriptor: %v", err)
	}
	defer tb.Close()
	if tb.Len() != 3 {
		t.Fatalf("%d records, want 3", tb.Len())
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, torn) {
		t.Fatal("the open changed the file")
	}
}
