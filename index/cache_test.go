package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
)

// TestCacheInvalidation opens a log, changes it in every way a user might,
// and checks the next open ignores the stale saved table.
func TestCacheInvalidation(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		change func(t *testing.T, path, cacheDir string)
		want   int64 // records after the change
		source string
	}{
		{"unchanged", func(t *testing.T, path, _ string) {}, 50, "cached"},
		{"touch", func(t *testing.T, path, _ string) {
			future := time.Now().Add(time.Hour)
			os.Chtimes(path, future, future)
		}, 50, "built"},
		{"append", func(t *testing.T, path, _ string) { recfile.AppendLog(t, path, codectest.Records(3, 10, 'x')...) }, 53, "built"},
		{"truncate", func(t *testing.T, path, _ string) {
			recfile.WriteLog(t, path, codectest.Records(20, 100, 'a'))
		}, 20, "built"},
		{"rewrite-same-size-same-mtime", func(t *testing.T, path, _ string) {
			fi, _ := os.Stat(path)
			recfile.WriteLog(t, path, codectest.Records(50, 100, 'b'))
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
		}, 50, "built"},
		{"replace", func(t *testing.T, path, _ string) {
			tmp := path + ".new"
			recfile.WriteLog(t, tmp, codectest.Records(7, 100, 'c'))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, 7, "built"},
		{"corrupt-cache", func(t *testing.T, _, cacheDir string) {
			files, _ := filepath.Glob(filepath.Join(cacheDir, "*.idx"))
			if len(files) != 1 {
				t.Fatalf("%d cache files", len(files))
			}
			b, _ := os.ReadFile(files[0])
			b[len(b)/2] ^= 0xff
			recfile.WriteFile(t, files[0], b)
		}, 50, "built"},
		{"truncated-cache", func(t *testing.T, _, cacheDir string) {
			files, _ := filepath.Glob(filepath.Join(cacheDir, "*.idx"))
			b, _ := os.ReadFile(files[0])
			recfile.WriteFile(t, files[0], b[:len(b)-9])
		}, 50, "built"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, cacheDir := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, "x.log")
			recfile.WriteLog(t, path, codectest.Records(50, 100, 'a'))
			o := Options{CacheDir: cacheDir}
			tb, err := Open(ctx, path, o)
			if err != nil {
				t.Fatal(err)
			}
			tb.Close()
			c.change(t, path, cacheDir)
			tb, err = Open(ctx, path, o)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if tb.Len() != c.want || tb.Info().Loaded != c.source {
				t.Fatalf("after %s: %d records from %q, want %d from %q", c.name, tb.Len(), tb.Info().Loaded, c.want, c.source)
			}
			for n := range tb.Len() {
				readRecord(t, tb, n)
			}
		})
	}
}

// TestCacheOptionsKeyed checks that a table saved under one set of options
// is not used for another.
func TestCacheOptionsKeyed(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "x.log")
	recfile.WriteLog(t, path, codectest.Records(5, 10, 'a'))
	ctx := context.Background()
	tb, _ := Open(ctx, path, Options{CacheDir: cacheDir})
	tb.Close()
	tb, err := Open(ctx, path, Options{CacheDir: cacheDir, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "built" {
		t.Fatalf("strict open used a table saved without strict")
	}
}

// TestCacheDecoderHostile feeds every truncation and many bit flips of a
// valid cache body to the decoder: it must fail cleanly, never panic.
func TestCacheDecoderHostile(t *testing.T) {
	for _, w := range loadWants(t)[:3] {
		tb, err := Open(context.Background(), w.path, Options{CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		var e encoder
		e.snapshot(tb.s())
		tb.Close()
		for cut := 0; cut < len(e.b); cut += 1 + cut/8 {
			d := decoder{b: bytes.Clone(e.b[:cut])}
			d.snapshot()
		}
		for i := 0; i < len(e.b); i += 3 {
			b := bytes.Clone(e.b)
			b[i] ^= 0xff
			d := decoder{b: b}
			d.snapshot()
		}
	}
}

// TestRefreshConcurrentAppender grows a log from another goroutine while
// readers read every record; Refresh must pick up each new record exactly
// once, in order, with nothing torn (run with -race).
func TestRefreshConcurrentAppender(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.log")
	recfile.WriteLog(t, path, codectest.Records(10, 50, 'a'))
	tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var written sync.Map // record number → payload
	for i, r := range codectest.Records(10, 50, 'a') {
		written.Store(int64(i), r)
	}
	stop := untilStopped(3, func(_, _ int) bool {
		for n := range tb.Len() {
			got := make([]byte, tb.Size(n))
			if _, err := tb.ReadAt(n, got, 0); err != nil {
				t.Errorf("record %d: %v", n, err)
				return false
			}
			if w, ok := written.Load(n); ok && !bytes.Equal(w.([]byte), got) {
				t.Errorf("record %d torn or wrong", n)
				return false
			}
		}
		return true
	})
	defer stop() // when the test fails before it stops them
	next := int64(10)
	for round := range 40 {
		batch := codectest.Records(1+round%4, 20+round*900, byte(round))
		for _, r := range batch {
			written.Store(next, r)
			next++
		}
		recfile.AppendLog(t, path, batch...)
		if _, err := tb.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if tb.Len() != next {
			t.Fatalf("round %d: %d records after refresh, want %d", round, tb.Len(), next)
		}
	}
	stop()
	if len(tb.Damage()) != 0 {
		t.Fatalf("damage after clean appends: %v", tb.Damage())
	}
	if changed, err := tb.Refresh(context.Background()); err != nil || changed {
		t.Fatalf("refresh of an unchanged file: %v %v", changed, err)
	}
}

// TestRefreshPartialTail hides a record that is still being written and
// finds it once it is complete.
func TestRefreshPartialTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.log")
	recfile.WriteLog(t, path, codectest.Records(3, 10, 'a'))
	full, _ := os.ReadFile(path)
	big := bytes.Repeat([]byte("z"), 100000)
	recfile.AppendLog(t, path, big)
	whole, _ := os.ReadFile(path)
	recfile.WriteFile(t, path, whole[:len(full)+40000]) // the big record is half written
	tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Len() != 3 {
		t.Fatalf("%d records with a half-written tail, want 3", tb.Len())
	}
	recfile.WriteFile(t, path, whole)
	if _, err := tb.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 4 || !bytes.Equal(readRecord(t, tb, 3), big) {
		t.Fatalf("completed record not found: %d records", tb.Len())
	}
	if len(tb.Damage()) != 0 {
		t.Fatalf("stale tail damage kept: %v", tb.Damage())
	}
}
