package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestCacheKeyedByIdentity: a local table's saved table is found by the
// file's source.Identity: its Key (the cleaned absolute path) names the
// cache file, its version (device, inode, size, times) decides whether the
// table in it is served. Other spellings of the path and a local.File of
// the file opened through OpenSource find it; a file put in the path's
// place (another inode, the very same bytes) is built afresh and saved in
// the same cache file.
func TestCacheKeyedByIdentity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.log")
	recs := codectest.Records(40, 300, 'k')
	recfile.WriteLog(t, path, recs)
	o := Options{CacheDir: t.TempDir()}

	// open opens p and checks how its table was obtained and what it reads.
	open := func(p, wantSource string) string {
		t.Helper()
		tb, err := Open(ctx, p, o)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		in := tb.Info()
		if in.Loaded != wantSource || in.CacheFile == "" {
			t.Fatalf("open %s: source %q, cache file %q; want %q", p, in.Loaded, in.CacheFile, wantSource)
		}
		if tb.Len() != int64(len(recs)) || !bytes.Equal(readRecord(t, tb, 39), recs[39]) {
			t.Fatalf("open %s: %d records", p, tb.Len())
		}
		return filepath.Base(in.CacheFile)
	}

	saved := open(path, "built")
	for _, p := range []string{dir + "/sub/../a.log", dir + "//./a.log"} {
		if got := open(p, "cached"); got != saved {
			t.Fatalf("open %s: cache file %s, want %s", p, got, saved)
		}
	}
	// The same identity through the storage seam: the same saved table.
	src := openLocal(t, dir+"/sub/../a.log")
	tb, err := OpenSource(ctx, src, o)
	if err != nil {
		t.Fatal(err)
	}
	if in := tb.Info(); in.Loaded != "cached" || filepath.Base(in.CacheFile) != saved {
		t.Fatalf("OpenSource of a local.File: source %q, cache file %s; want cached from %s", in.Loaded, in.CacheFile, saved)
	}
	tb.Close()

	// Another inode at the path, byte for byte the same: same Key, another
	// version. Its table is built, and replaces the old one in the file.
	recfile.WriteLog(t, path+".new", recs)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if got := open(path, "built"); got != saved {
		t.Fatalf("replaced file saved in %s, want %s (the path's key)", got, saved)
	}
	if got := open(dir+"//a.log", "cached"); got != saved {
		t.Fatalf("replaced file: cache file %s, want %s", got, saved)
	}
}

// TestCachePathFromIdentityKey: the cache file of a local table is the one
// its source.Identity's Key names.
func TestCachePathFromIdentityKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	recfile.WriteLog(t, path, codectest.Records(3, 10, 'p'))
	o := Options{CacheDir: t.TempDir()}
	tb, err := Open(context.Background(), dir+"/./a.log", o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	src := openLocal(t, path)
	defer src.Close()
	if key := src.Identity().Key; key != path {
		t.Fatalf("key %q, want %q", key, path)
	}
	if got, want := tb.Info().CacheFile, cachePath(o.CacheDir, src.Identity().Key); got != want {
		t.Fatalf("cache file %q, want %q", got, want)
	}
}

// TestRefreshAfterClose: a refresh of a closed table fails with
// os.ErrClosed and an append fails writing nothing, even with another file
// opened since (which may have been given the closed descriptor's number:
// the raw fstat of a refresh or an append holds the table's descriptor,
// see Table.hold); the table still describes its file.
func TestRefreshAfterClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	recs := codectest.Records(5, 50, 'c')
	recfile.WriteLog(t, path, recs)
	other := filepath.Join(dir, "b.log")
	recfile.WriteLog(t, other, codectest.Records(9, 70, 'o'))
	tb, err := Open(context.Background(), path, Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := tb.Refresh(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("refresh of a closed table: %v, want os.ErrClosed", err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{}); err == nil {
		t.Fatal("append to a closed table succeeded")
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("append to a closed table changed the file (%v)", err)
	}
	if tb.Len() != int64(len(recs)) {
		t.Fatalf("%d records, want %d", tb.Len(), len(recs))
	}
}
