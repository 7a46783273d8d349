package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
)

// TestStaleTailSurvivesCache builds the index of a recycled WAL (log 7
// written over an older log 6) and checks that its stale tail keeps its
// kind through a saved and reloaded table.
func TestStaleTailSurvivesCache(t *testing.T) {
	// Log 6 (two blocks of records), then log 7's one record written over
	// its start, as RocksDB and pebble leave a recycled file.
	var old bytes.Buffer
	w := leveldb.NewWriter(&old, leveldb.WriterOptions{Recyclable: true, LogNum: 6})
	for i := 0; old.Len() < 2*blockSize; i++ {
		if _, err := w.WriteRecord(codectest.Records(1, 2000, byte(i))[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var live bytes.Buffer
	w = leveldb.NewWriter(&live, leveldb.WriterOptions{Recyclable: true, LogNum: 7})
	if _, err := w.WriteRecord([]byte("live record")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file := old.Bytes()
	copy(file, live.Bytes())
	p := filepath.Join(t.TempDir(), "000007.log")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, want := range []string{"built", "cached"} {
		tb, err := Open(context.Background(), p, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		ds := tb.Damage()
		if tb.Info().Loaded != want || tb.Len() != 1 || len(ds) != 1 || !ds[0].Stale() || ds[0].Err != codec.ErrStale ||
			ds[0].Off != 22 || ds[0].Off+ds[0].Len != int64(len(file)) {
			t.Errorf("%s: source %s, %d records, damage %v", want, tb.Info().Loaded, tb.Len(), ds)
		}
		tb.Close()
	}
}
