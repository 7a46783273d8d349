package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestAppendSyncs counts the fsyncs of the source file: an Append with
// Sync makes one (recordio appends always sync), whatever the number of
// records; without Sync a leveldb or TFRecord append makes none; Sync
// makes one. Not parallel: it sets the syncs hook.
func TestAppendSyncs(t *testing.T) {
	counts := map[string]int{}
	syncs = func(path string) { counts[path]++ }
	t.Cleanup(func() { syncs = nil })
	for _, c := range []struct {
		f       codec.Format
		trailer bool
		nosync  int // syncs of an Append without Sync
	}{
		{codec.LevelDB, false, 0},
		{codec.TFRecord, false, 0},
		{codec.RecordIO, false, 1},
		{codec.RecordIO, true, 1},
	} {
		name := fmt.Sprintf("%v-trailer=%v", c.f, c.trailer)
		p := filepath.Join(t.TempDir(), "f")
		tb, err := Create(context.Background(), p, c.f, c.trailer, Options{CacheDir: "-", Writable: true})
		if err != nil {
			t.Fatal(err)
		}
		recs := [][]byte{[]byte("one"), []byte("two"), []byte("three")}
		step := func(what string, want int, do func() error) {
			before := counts[p]
			if err := do(); err != nil {
				t.Fatalf("%s: %s: %v", name, what, err)
			}
			if got := counts[p] - before; got != want {
				t.Errorf("%s: %s: %d fsyncs, want %d", name, what, got, want)
			}
		}
		step("Append", c.nosync, func() error { _, err := tb.Append(context.Background(), recs, AppendOptions{}); return err })
		step("Append with Sync", 1, func() error {
			_, err := tb.Append(context.Background(), recs, AppendOptions{Sync: true})
			return err
		})
		step("Sync", 1, tb.Sync)
		if tb.Len() != 6 {
			t.Errorf("%s: %d records, want 6", name, tb.Len())
		}
		tb.Close()
	}
}
