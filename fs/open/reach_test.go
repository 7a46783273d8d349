package open

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// TestMountedFileAppendCheck: the table of a mounted file checks, before
// each append, that its path still names the file it writes, with one
// stat and no open of whatever is there; a symbolic link to the same file
// or another file at the path refuses the append (index.ErrReplaced), and
// once the file is back the append goes through.
func TestMountedFileAppendCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	tb, err := index.Create(ctx, path, codec.LevelDB, false, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	var reopens, stats atomic.Int64
	reach := noFollowReach(path)
	open, stat := reach.reopen, reach.stat
	reach.reopen = func() (*os.File, error) { reopens.Add(1); return open() }
	reach.stat = func() (os.FileInfo, error) { stats.Add(1); return stat() }
	tb, err = localTable(ctx, path, Options{Index: index.Options{CacheDir: "-", Writable: true}}, reach)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	appendOne := func() error {
		_, err := tb.Append(ctx, [][]byte{[]byte("record")}, index.AppendOptions{})
		return err
	}
	reopens.Store(0)
	if err := appendOne(); err != nil {
		t.Fatal(err)
	}
	if reopens.Load() != 0 || stats.Load() == 0 {
		t.Errorf("an append reopened the path %d times and stat'ed it %d times: want a stat, no open", reopens.Load(), stats.Load())
	}
	aside := filepath.Join(dir, "aside")
	if err := os.Rename(path, aside); err != nil {
		t.Fatal(err)
	}
	for name, put := range map[string]func() error{
		"symlink to the file": func() error { return os.Symlink(aside, path) },
		"another file":        func() error { return os.WriteFile(path, []byte("other"), 0o644) },
	} {
		if err := put(); err != nil {
			t.Fatal(err)
		}
		if err := appendOne(); !errors.Is(err, index.ErrReplaced) {
			t.Errorf("append with %s at the path: %v, want ErrReplaced", name, err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(aside, path); err != nil {
		t.Fatal(err)
	}
	if err := appendOne(); err != nil {
		t.Fatalf("append with the file back: %v", err)
	}
	if tb.Len() != 2 {
		t.Errorf("%d records, want 2", tb.Len())
	}
}

// TestRefresh: a local table sees what was appended to its file since it
// was opened; a remote target's table is left as it is (its version keys
// it), whatever its file did.
func TestRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.log")
	o := Options{Index: index.Options{CacheDir: "-", Writable: true}}
	w, err := CreateOrOpen(ctx, path, "leveldb", false, o)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	appendOne := func() {
		if _, err := w.Append(ctx, [][]byte{[]byte("record")}, index.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	appendOne()
	tb, err := Table(ctx, path, Options{Index: index.Options{CacheDir: "-"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	appendOne()
	if changed, err := Refresh(ctx, tb, "https://example.invalid/a.log"); changed || err != nil || tb.Len() != 1 {
		t.Errorf("remote target: changed %v, %v, %d records; want false, nil, 1", changed, err, tb.Len())
	}
	if changed, err := Refresh(ctx, tb, path); !changed || err != nil || tb.Len() != 2 {
		t.Errorf("local file: changed %v, %v, %d records; want true, nil, 2", changed, err, tb.Len())
	}
}
