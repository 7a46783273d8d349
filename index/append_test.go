package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
)

func TestAppendLevelDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	base := codectest.Records(5, 40000, 'a') // multi-block records
	recfile.WriteLog(t, path, base)
	tb, err := Open(ctx, path, Options{CacheDir: t.TempDir(), Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	more := [][]byte{[]byte("x"), {}, bytes.Repeat([]byte("y"), 100000)}
	first, err := tb.Append(ctx, more, AppendOptions{Sync: true})
	if err != nil || first != 5 {
		t.Fatalf("append: first %d, %v", first, err)
	}
	all := append(append([][]byte{}, base...), more...)
	// The file is exactly what one writer session would have produced.
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for _, r := range all {
		w.WriteRecord(r)
	}
	w.Close()
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("appended file differs from a one-session write")
	}
	if tb.Len() != int64(len(all)) || !bytes.Equal(readRecord(t, tb, 7), more[2]) {
		t.Fatalf("table after append: %d records", tb.Len())
	}
}

// TestAppendAfterTornTail: a crashed writer left half a record; the next
// append moves it aside, and the file reads cleanly with no glued record.
func TestAppendAfterTornTail(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "a.log")
	recfile.WriteLog(t, path, codectest.Records(3, 100, 'a'))
	torn, from := tearLog(t, path, 50000)
	tb, err := Open(ctx, path, Options{CacheDir: cache}) // not Writable: the append itself must repair
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if len(tb.Damage()) == 0 {
		t.Fatal("torn tail not reported")
	}
	if _, err := tb.Append(ctx, [][]byte{[]byte("after")}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 4 || string(readRecord(t, tb, 3)) != "after" || len(tb.Damage()) != 0 {
		t.Fatalf("after append: %d records, damage %v", tb.Len(), tb.Damage())
	}
	saved, _ := filepath.Glob(filepath.Join(cache, "torn", "a.log.*"))
	if len(saved) != 1 {
		t.Fatalf("torn bytes not saved aside: %v", saved)
	}
	if b, _ := os.ReadFile(saved[0]); !bytes.Equal(b, torn[from:]) {
		t.Fatalf("saved torn bytes differ")
	}
}

// TestAppendKeepsAppEnginePadding: a padded file is still padded after an append.
func TestAppendKeepsAppEnginePadding(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(recfile.Vector(t, "leveldb/appengine-padded.log"))
	if err != nil {
		t.Fatal(err)
	}
	tb, path := openNamed(t, "ae.log", src, Options{CacheDir: "-", Writable: true})
	n := tb.Len()
	if _, err := tb.Append(ctx, [][]byte{[]byte("one more")}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Size()%32768 != 0 || tb.Len() != n+1 || string(readRecord(t, tb, n)) != "one more" {
		t.Fatalf("size %d, %d records", fi.Size(), tb.Len())
	}
}

func TestAppendRecordIO(t *testing.T) {
	ctx := context.Background()
	for _, trailer := range []bool{false, true} {
		t.Run(fmt.Sprint("trailer=", trailer), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "new.rio")
			tb, err := Create(ctx, path, codec.RecordIO, trailer, Options{CacheDir: "-"})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			var want [][]byte
			for round := range 4 {
				batch := codectest.Records(1+round, 30000*round, byte('a'+round))
				if _, err := tb.Append(ctx, batch, AppendOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, batch...)
			}
			if tb.Len() != int64(len(want)) || tb.HasTrailer() != trailer {
				t.Fatalf("%d records, trailer %v", tb.Len(), tb.HasTrailer())
			}
			for i, w := range want {
				if !bytes.Equal(readRecord(t, tb, int64(i)), w) {
					t.Fatalf("item %d differs", i)
				}
			}
		})
	}
}

func TestAppendLegacyRefused(t *testing.T) {
	src, _ := os.ReadFile(filepath.Join(vectorDir, "grailbio", "legacy-packed.grail-rpk"))
	tb, path := openNamed(t, "x.grail-rpk", src, Options{CacheDir: "-"})
	_, err := tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{})
	if !errors.Is(err, codec.ErrUnsupported) {
		t.Fatalf("append to legacy: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(src, after) {
		t.Fatal("refused append changed the file")
	}
}

// TestAppendConcurrent: many goroutines append at once; every record lands
// exactly once and whole.
func TestAppendConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.log")
	tb, err := Create(ctx, path, codec.LevelDB, false, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if _, err := tb.Append(ctx, [][]byte{[]byte(fmt.Sprintf("g%d-%03d-%s", g, i, bytes.Repeat([]byte("p"), i*300)))}, AppendOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for n := range tb.Len() {
		r := string(readRecord(t, tb, n))
		key := r[:min(len(r), 8)]
		if seen[key] {
			t.Fatalf("record %q twice", key)
		}
		seen[key] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct records, want 200", len(seen))
	}
}

// TestWritableOpenRepairsTornTail: opening a torn log for writing repairs it
// at once (saved aside, truncated), before any append; a read-only open
// leaves the file alone.
func TestWritableOpenRepairsTornTail(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "a.log")
	torn, from := tornLog(t, path)
	good := torn[:from]
	ro, err := Open(ctx, path, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if b, _ := os.ReadFile(path); !bytes.Equal(b, torn) {
		t.Fatal("read-only open changed the file")
	}
	tb, err := Open(ctx, path, Options{CacheDir: cache, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
		t.Fatalf("writable open left %d bytes, want the %d good ones", len(b), len(good))
	}
	if tb.Len() != 3 || len(tb.Damage()) != 0 {
		t.Fatalf("after repair: %d records, damage %v", tb.Len(), tb.Damage())
	}
}
