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
// Sync, of the file and of its directory: two of the file by default;
// one with DeferCreateSync for the formats whose new file is empty (the
// append's fsync covers it), also when the append has no records;
// recordio, whose header Create writes, syncs it all the same. The
// directory is synced once, with the first fsync of the file: at Create,
// or after the deferred append. Not parallel: it sets the syncs hook.
func TestCreateSyncs(t *testing.T) {
	counts := map[string]int{}
	syncs = func(path string) { counts[path]++ }
	t.Cleanup(func() { syncs = nil })
	for _, c := range []struct {
		f            codec.Format
		deferSync    bool
		recs         int
		create, want int // fsyncs of Create, and of Create and Append together
		dirCreate    int // fsyncs of the directory by Create (1 in all, with the Append)
	}{
		{codec.LevelDB, false, 3, 1, 2, 1},
		{codec.LevelDB, true, 3, 0, 1, 0},
		{codec.LevelDB, true, 0, 0, 1, 0},
		{codec.TFRecord, false, 3, 1, 2, 1},
		{codec.TFRecord, true, 3, 0, 1, 0},
		{codec.RecordIO, true, 3, 1, 2, 1},
	} {
		name := fmt.Sprintf("%v-defer=%v-records=%d", c.f, c.deferSync, c.recs)
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		tb, err := Create(context.Background(), p, c.f, false, Options{CacheDir: "-", Writable: true, DeferCreateSync: c.deferSync})
		if err != nil {
			t.Fatal(err)
		}
		if counts[p] != c.create || counts[dir] != c.dirCreate {
			t.Errorf("%s: Create made %d fsyncs and %d of the directory, want %d and %d", name, counts[p], counts[dir], c.create, c.dirCreate)
		}
		lines := strings.Repeat("record\n", c.recs)
		if _, _, err := tb.AppendStream(context.Background(), LineRecords(strings.NewReader(lines)), AppendOptions{Sync: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if counts[p] != c.want || counts[dir] != 1 {
			t.Errorf("%s: Create and Append with Sync made %d fsyncs and %d of the directory, want %d and 1", name, counts[p], counts[dir], c.want)
		}
		if _, err := tb.Append(context.Background(), [][]byte{[]byte("more")}, AppendOptions{Sync: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := tb.Sync(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if counts[dir] != 1 {
			t.Errorf("%s: the directory was synced %d times after more synced appends, want once", name, counts[dir])
		}
		if tb.Len() != int64(c.recs)+1 {
			t.Errorf("%s: %d records, want %d", name, tb.Len(), c.recs+1)
		}
		tb.Close()
	}
}

// TestDeferredCreateSyncsDirectory: after a deferred Create, appends
// without Sync leave the directory alone; the first Sync syncs it, once.
// Not parallel: it sets the syncs hook.
func TestDeferredCreateSyncsDirectory(t *testing.T) {
	counts := map[string]int{}
	syncs = func(path string) { counts[path]++ }
	t.Cleanup(func() { syncs = nil })
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord} {
		dir := t.TempDir()
		tb, err := Create(context.Background(), filepath.Join(dir, "f"), f, false, Options{CacheDir: "-", Writable: true, DeferCreateSync: true})
		if err != nil {
			t.Fatal(err)
		}
		step := func(what string, want int, do func() error) {
			if err := do(); err != nil {
				t.Fatalf("%v: %s: %v", f, what, err)
			}
			if counts[dir] != want {
				t.Errorf("%v: after %s the directory was synced %d times, want %d", f, what, counts[dir], want)
			}
		}
		appendOne := func() error {
			_, err := tb.Append(context.Background(), [][]byte{[]byte("r")}, AppendOptions{})
			return err
		}
		step("Append", 0, appendOne)
		step("Sync", 1, tb.Sync)
		step("Append", 1, appendOne)
		step("Sync", 1, tb.Sync)
		tb.Close()
	}
}
