package fs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/local"
)

// TestCreateRefusedClosedLog: in a log its writer closed (pebble's end
// marker), create fails at once with EPERM and the file is untouched.
func TestCreateRefusedClosedLog(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(codectest.Vector(t, "leveldb/pebble-recyclable.log", nil))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "000007.log")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := index.Open(ctx, dst, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewFile(dst, tb, Options{ReadWrite: true, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, _, err := tr.Create(ctx, tr.Root(), "x"); !errors.Is(err, leveldb.ErrClosedLog) || Errno(err) != syscall.EPERM {
		t.Errorf("create in a closed log: %v (%v)", err, Errno(err))
	}
	if after, _ := os.ReadFile(dst); !bytes.Equal(after, data) {
		t.Error("closed log changed")
	}
}

// TestCloseRefusedDBLock: a database opened its directory while a file was
// being written: the append at close fails with EBUSY, the log untouched;
// new files are refused at create.
func TestCloseRefusedDBLock(t *testing.T) {
	ctx := context.Background()
	tr, path := newWritableTree(t, codec.LevelDB, Options{ReadWrite: true, Logger: codectest.QuietLogger()})
	defer tr.Close()
	_, h, err := tr.Create(ctx, tr.Root(), "late")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("record"), 0); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	lock, err := os.Create(filepath.Join(filepath.Dir(path), "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Flush(ctx); !errors.Is(err, local.ErrDBLocked) || Errno(err) != syscall.EBUSY {
		t.Errorf("flush with the database open: %v (%v)", err, Errno(err))
	}
	h.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the open database's log changed")
	}
	if _, _, err := tr.Create(ctx, tr.Root(), "later"); Errno(err) != syscall.EBUSY {
		t.Errorf("create with the database open: %v (%v)", err, Errno(err))
	}
}
