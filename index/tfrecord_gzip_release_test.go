package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fdsUnder counts this process's open descriptors of files under dir.
func fdsUnder(t *testing.T, dir string) int {
	t.Helper()
	return fdsWhere(t, func(l string) bool { return strings.HasPrefix(l, dir+string(filepath.Separator)) })
}

// TestTFRecordGzipReplacedReleasesCache: a gzip table loaded from its
// saved table reads its checkpoint windows through the cache file it
// keeps open; when the file at its path is replaced and Refresh takes the
// new version in, the old version's cache file is closed (not left to a
// finalizer, pinning a deleted inode), and Close closes the last one.
func TestTFRecordGzipReplacedReleasesCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	o := Options{CacheDir: cache}
	path := filepath.Join(dir, "a.tfrecord.gz")
	version := func(i int) [][]byte {
		recs := textPayloads(150+i, 3000)
		tmp := filepath.Join(dir, "next")
		if err := os.WriteFile(tmp, gzipRecords(recs), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		tb, err := Open(ctx, path, o) // builds and saves this version's table
		if err != nil {
			t.Fatal(err)
		}
		tb.Close()
		return recs
	}
	version(0)
	tb, err := Open(ctx, path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "cached" || tb.s().tab.(*tfrTable).saved == nil {
		t.Fatalf("%s table: want it loaded with its windows in the cache file", tb.Info().Loaded)
	}
	for i := 1; i <= 5; i++ {
		recs := version(i)
		if changed, err := tb.Refresh(ctx); err != nil || !changed {
			t.Fatalf("Refresh %d: %v, %v", i, changed, err)
		}
		if tb.Info().Loaded != "cached" || tb.Len() != int64(len(recs)) {
			t.Fatalf("version %d: %s table of %d records, want %d cached", i, tb.Info().Loaded, tb.Len(), len(recs))
		}
		if last := tb.Len() - 1; !bytes.Equal(readRecord(t, tb, last), recs[last]) {
			t.Fatalf("version %d: record %d differs", i, last)
		}
		if n := fdsUnder(t, cache); n != 1 {
			t.Fatalf("after replacement %d: %d descriptors open under the cache directory, want 1 (the current table's)", i, n)
		}
	}
	tb.Close()
	if n := fdsUnder(t, cache); n != 0 {
		t.Fatalf("after Close: %d descriptors open under the cache directory", n)
	}
}
