package index

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestCacheLoadAllocatesTableOnce: a saved table is decoded as its file is
// read, so loading it allocates about the table (12 bytes a record of a
// leveldb log) and a window, not the file as well: a 10M-record mount
// peaked at 249 MB right after mounting with its 120 MB table when the
// file was read whole first.
func TestCacheLoadAllocatesTableOnce(t *testing.T) {
	ctx := context.Background()
	const n = 400_000
	path := filepath.Join(t.TempDir(), "x.log")
	recfile.WriteLog(t, path, codectest.Records(n, 8, 'a'))
	o := Options{CacheDir: t.TempDir()}
	tb, err := Open(ctx, path, o)
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tb, err = Open(ctx, path, o)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "cached" || tb.Len() != n {
		t.Fatalf("%d records from %q, want %d from the saved table", tb.Len(), tb.Info().Loaded, n)
	}
	table := uint64(12 * n)
	if got := after.TotalAlloc - before.TotalAlloc; got > table+table/4+2<<20 {
		t.Errorf("loading a saved table of %d bytes allocated %d", table, got)
	}
	for _, k := range []int64{0, n / 2, n - 1} {
		readRecord(t, tb, k)
	}
}
