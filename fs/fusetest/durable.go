package fusetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// syncCounter is an index.Table whose appends and syncs are counted.
type syncCounter struct {
	*index.Table
	mu                     sync.Mutex
	appends, synced, syncs int // Append calls, those with Sync, Sync calls
}

func (c *syncCounter) Append(ctx context.Context, recs [][]byte, o index.AppendOptions) (int64, error) {
	first, err := c.Table.Append(ctx, recs, o)
	c.mu.Lock()
	c.appends++
	if o.Sync && err == nil {
		c.synced++
	}
	c.mu.Unlock()
	return first, err
}

func (c *syncCounter) Sync() error {
	err := c.Table.Sync()
	c.mu.Lock()
	if err == nil {
		c.syncs++
	}
	c.mu.Unlock()
	return err
}

// counts returns the appends, synced appends and syncs so far.
func (c *syncCounter) counts() [3]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return [3]int{c.appends, c.synced, c.syncs}
}

// CheckDurability mounts, with mount, a writable tree of a new leveldb log
// and checks through the kernel what close(2) and fsync(2) of a created
// file promise: a close appends without syncing the source; an fsync has
// synced it before it returns, whether it appends the record (fsync
// before close) or the record was appended by an earlier close of a
// duplicate descriptor.
func CheckDurability(t *testing.T, mount fs.Mounter) {
	NeedFUSE(t)
	p := filepath.Join(t.TempDir(), "w.log")
	tb, err := index.Create(context.Background(), p, codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &syncCounter{Table: tb}
	tr, err := fs.NewFile(p, c, fs.Options{ReadWrite: true, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	dir := t.TempDir()
	srv, err := mount(dir, tr, fs.MountOptions{ReadWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("record " + name); err != nil {
			t.Fatal(err)
		}
		return f
	}
	expect := func(what string, want [3]int) {
		t.Helper()
		if got := c.counts(); got != want {
			t.Errorf("%s: appends, synced appends, syncs = %v, want %v", what, got, want)
		}
	}
	// close(2): appended, not synced.
	if err := create("closed").Close(); err != nil {
		t.Fatal(err)
	}
	expect("after close", [3]int{1, 0, 0})
	// fsync(2) before close: appended and synced before fsync returns.
	f := create("fsynced")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	expect("after fsync", [3]int{2, 1, 0})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	expect("after fsync and close", [3]int{2, 1, 0})
	// Appended by the close of a duplicate, then fsync'ed: synced.
	f = create("dup")
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Close(fd); err != nil {
		t.Fatal(err)
	}
	expect("after closing a duplicate", [3]int{3, 1, 0})
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	expect("after fsync of an appended file", [3]int{3, 1, 1})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := tb.Len(); n != 3 {
		t.Errorf("%d records in the log, want 3", n)
	}
}
