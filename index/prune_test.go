package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec"
)

// indexInto indexes a fresh log of n records named name in src, saving to
// cache, and returns the source path and its cache file.
func indexInto(t *testing.T, src, cache, name string, n int) (string, string) {
	t.Helper()
	p := filepath.Join(src, name)
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = bytes.Repeat([]byte{'x'}, 10+i%50)
	}
	recfile.WriteLog(t, p, recs)
	tb, err := Open(context.Background(), p, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	cf := tb.Info().CacheFile
	tb.Close()
	if cf == "" || filepath.Dir(cf) != cache {
		t.Fatalf("cache file %q not in %s", cf, cache)
	}
	if _, err := os.Stat(cf); err != nil {
		t.Fatal(err)
	}
	return p, cf
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestPruneCache: indexes of deleted or replaced sources, indexes unused
// for MaxAge, and old temporary files go; then the least recently used
// while over MaxBytes; files that are not ours to judge stay.
func TestPruneCache(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	gone, goneCF := indexInto(t, src, cache, "gone.log", 100)
	replaced, replacedCF := indexInto(t, src, cache, "replaced.log", 100)
	_, oldCF := indexInto(t, src, cache, "old.log", 100)
	var lru []string // cache files, least recently used first
	for i := range 5 {
		_, cf := indexInto(t, src, cache, fmt.Sprintf("keep%d.log", i), 2000)
		lru = append(lru, cf)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	// Replaced: another file under the same name (new inode).
	if err := os.Rename(filepath.Join(src, "keep0.log"), replaced+".new"); err != nil {
		t.Fatal(err)
	}
	recfile.WriteLog(t, replaced+".tmp", [][]byte{[]byte("other")})
	if err := os.Rename(replaced+".tmp", replaced); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(oldCF, now, now.Add(-40*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, cf := range lru {
		at := now.Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(cf, at, at); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(cache, ".tmp-0123456789abcdef.idx")
	freshTmp := filepath.Join(cache, ".tmp-fedcba9876543210.idx")
	other := filepath.Join(cache, "notes.txt")
	link := filepath.Join(cache, "0123456789abcdef0123456789abcdef.idx")
	for _, p := range []string{tmp, freshTmp, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(tmp, now, now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lru[4], link); err != nil {
		t.Fatal(err)
	}
	// The cap keeps the two most recently used of the five (keep0's
	// source was moved away, so lru[0] goes for its source).
	var sizes []int64
	for _, cf := range lru {
		fi, _ := os.Stat(cf)
		sizes = append(sizes, fi.Size())
	}
	capBytes := sizes[3] + sizes[4]
	res, err := PruneCache(cache, PruneOptions{MaxBytes: capBytes})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{goneCF, false}, {replacedCF, false}, {oldCF, false},
		{lru[0], false}, {lru[1], false}, {lru[2], false}, {lru[3], true}, {lru[4], true},
		{tmp, false}, {freshTmp, true}, {other, true}, {link, true},
	} {
		if exists(c.path) != c.want {
			t.Errorf("%s exists=%v after pruning; want %v", filepath.Base(c.path), !c.want, c.want)
		}
	}
	if res.Kept != 2 || res.KeptBytes != capBytes || res.Removed != 6 {
		t.Errorf("result %+v; want 2 kept (%d bytes), 6 removed", res, capBytes)
	}
}

// TestCacheFileUsedAndPrunedOnSave: loading a saved index marks it used,
// and a save prunes its directory when the last pruning is a day old.
func TestCacheFileUsedAndPrunedOnSave(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	p, cf := indexInto(t, src, cache, "a.log", 10)
	long := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(cf, long, long); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(context.Background(), p, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Info().Loaded != "cached" || tb.Info().CacheFile != cf {
		t.Fatalf("second open: %+v", tb.Info())
	}
	tb.Close()
	if fi, _ := os.Stat(cf); time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("a loaded index was not marked used: mtime %v", fi.ModTime())
	}
	// A stale index of a deleted file, and a stamp a day old: the next
	// save in the directory (a fresh process's first) prunes it.
	q, qcf := indexInto(t, src, cache, "b.log", 10)
	os.Remove(q)
	stamp := filepath.Join(cache, pruneStamp)
	day := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(stamp, day, day); err != nil {
		t.Fatal(err)
	}
	autoPruned.Delete(cache)
	indexInto(t, src, cache, "c.log", 10)
	if exists(qcf) {
		t.Error("the index of a deleted source survived a save a day after the last pruning")
	}
	if !exists(cf) {
		t.Error("a live index was pruned")
	}
}

// TestEmptyFileFlavor: an empty file opened without a format says it is
// an empty file (it used to read "leveldb log"); given a format, the
// format's own flavour stays.
func TestEmptyFileFlavor(t *testing.T) {
	tb, p := openNamed(t, "empty.log", nil, Options{CacheDir: "-"})
	if in := tb.Info(); in.Flavor != EmptyFlavor || in.Records != 0 {
		t.Errorf("empty file: %+v", in)
	}
	tb2, err := Open(context.Background(), p, Options{CacheDir: "-", Format: codec.LevelDB})
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Close()
	if in := tb2.Info(); in.Flavor == EmptyFlavor {
		t.Errorf("empty file with --format leveldb: %+v", in)
	}
}
