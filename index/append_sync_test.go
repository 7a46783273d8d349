package index

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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

// TestCreateSyncs counts the fsyncs of Create followed by an Append with
// Sync: two by default; one with DeferCreateSync for the formats whose new
// file is empty (the append's fsync covers it), also when the append has
// no records; recordio, whose header Create writes, syncs it all the same.
// Not parallel: it sets the syncs hook.
func TestCreateSyncs(t *testing.T) {
	counts := map[string]int{}
	syncs = func(path string) { counts[path]++ }
	t.Cleanup(func() { syncs = nil })
	for _, c := range []struct {
		f            codec.Format
		deferSync    bool
		recs         int
		create, want int // fsyncs of Create, and of Create and Append together
	}{
		{codec.LevelDB, false, 3, 1, 2},
		{codec.LevelDB, true, 3, 0, 1},
		{codec.LevelDB, true, 0, 0, 1},
		{codec.TFRecord, false, 3, 1, 2},
		{codec.TFRecord, true, 3, 0, 1},
		{codec.RecordIO, true, 3, 1, 2},
	} {
		name := fmt.Sprintf("%v-defer=%v-records=%d", c.f, c.deferSync, c.recs)
		p := filepath.Join(t.TempDir(), "f")
		tb, err := Create(context.Background(), p, c.f, false, Options{CacheDir: "-", Writable: true, DeferCreateSync: c.deferSync})
		if err != nil {
			t.Fatal(err)
		}
		if counts[p] != c.create {
			t.Errorf("%s: Create made %d fsyncs, want %d", name, counts[p], c.create)
		}
		lines := strings.Repeat("record\n", c.recs)
		if _, _, err := tb.AppendStream(context.Background(), LineRecords(strings.NewReader(lines)), AppendOptions{Sync: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if counts[p] != c.want {
			t.Errorf("%s: Create and Append with Sync made %d fsyncs, want %d", name, counts[p], c.want)
		}
		if tb.Len() != int64(c.recs) {
			t.Errorf("%s: %d records, want %d", name, tb.Len(), c.recs)
		}
		tb.Close()
	}
}
