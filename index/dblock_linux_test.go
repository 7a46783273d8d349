package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source/local"
	"github.com/recfs/recfs/source/sourcetest"
)

// TestCreateRefusedByDBLock: no new record file appears in the directory
// of a running database, unless IgnoreDBLock.
func TestCreateRefusedByDBLock(t *testing.T) {
	ctx := context.Background()
	log, lock := sourcetest.LockDir(t)
	unix.Flock(int(sourcetest.OpenLockFile(t, lock).Fd()), unix.LOCK_EX)
	path := filepath.Join(filepath.Dir(log), "new.log")
	if _, err := Create(ctx, path, codec.LevelDB, false, Options{CacheDir: "-"}); !errors.Is(err, local.ErrDBLocked) {
		t.Fatalf("create in a locked database directory: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused create left a file: %v", err)
	}
	tb, err := Create(ctx, path, codec.LevelDB, false, Options{CacheDir: "-", IgnoreDBLock: true})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
}

// TestAppendRefusedByDBLock: a log whose database is open (its LOCK held)
// is not appended to, nor repaired when opened for writing; IgnoreDBLock
// (recfs --force) appends.
func TestAppendRefusedByDBLock(t *testing.T) {
	ctx := context.Background()
	for _, lockKind := range []string{"flock", "fcntl"} {
		t.Run(lockKind, func(t *testing.T) {
			log, lock := sourcetest.LockDir(t)
			torn, _ := tearLog(t, log, 50000) // a record the database is writing right now
			if lockKind == "flock" {
				unix.Flock(int(sourcetest.OpenLockFile(t, lock).Fd()), unix.LOCK_EX)
			} else {
				sourcetest.HoldFcntl(t, lock)
			}
			tb, err := Open(ctx, log, Options{CacheDir: "-", Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			_, err = tb.Append(ctx, [][]byte{[]byte("x")}, AppendOptions{Sync: true})
			if !errors.Is(err, local.ErrDBLocked) || !strings.Contains(err.Error(), lock) {
				t.Fatalf("append to a locked database's log: %v", err)
			}
			if after, _ := os.ReadFile(log); !bytes.Equal(after, torn) {
				t.Fatalf("the locked log changed: %d -> %d bytes", len(torn), len(after))
			}
			forced, err := Open(ctx, log, Options{CacheDir: "-", Writable: true, IgnoreDBLock: true})
			if err != nil {
				t.Fatal(err)
			}
			defer forced.Close()
			n := forced.Len()
			if _, err := forced.Append(ctx, [][]byte{[]byte("x")}, AppendOptions{}); err != nil || forced.Len() != n+1 {
				t.Fatalf("forced append: %v, %d records after %d", err, forced.Len(), n)
			}
		})
	}
}

// TestCreateSourceRefusedByDBLock: a record file the caller made (mkdir in a
// --rw mount) is not filled in the directory of a running database, unless
// IgnoreDBLock: CreateSource refuses before writing anything.
func TestCreateSourceRefusedByDBLock(t *testing.T) {
	ctx := context.Background()
	log, lock := sourcetest.LockDir(t)
	unix.Flock(int(sourcetest.OpenLockFile(t, lock).Fd()), unix.LOCK_EX)
	for _, ff := range []codec.Format{codec.LevelDB, codec.RecordIO} {
		path := filepath.Join(filepath.Dir(log), "new-"+ff.String())
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if tb, err := CreateSource(ctx, localOf(t, f, path), ff, false, Options{CacheDir: "-"}); !errors.Is(err, local.ErrDBLocked) {
			if tb != nil {
				tb.Close()
			}
			t.Fatalf("%s: create in a locked database directory: %v", ff, err)
		}
		if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
			t.Fatalf("%s: the refused create wrote into the file: %v %v", ff, fi.Size(), err)
		}
		tb, err := CreateSource(ctx, localOf(t, f, path), ff, false, Options{CacheDir: "-", IgnoreDBLock: true})
		if err != nil {
			t.Fatal(err)
		}
		tb.Close()
	}
}
