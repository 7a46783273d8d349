package local

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/source/sourcetest"
)

func TestCheckDBLock(t *testing.T) {
	cases := []struct {
		name string
		hold func(t *testing.T, lock string) (kind string, pid int) // "" kind: not locked
	}{
		{"unlocked", func(*testing.T, string) (string, int) { return "", 0 }},
		{"flock exclusive (goleveldb)", func(t *testing.T, lock string) (string, int) {
			if err := unix.Flock(int(sourcetest.OpenLockFile(t, lock).Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return "flock", 0
		}},
		{"flock shared (goleveldb read-only)", func(t *testing.T, lock string) (string, int) {
			if err := unix.Flock(int(sourcetest.OpenLockFile(t, lock).Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return "", 0 // a read-only database writes no log
		}},
		{"fcntl in this process (pebble's F_SETLK)", func(t *testing.T, lock string) (string, int) {
			err := unix.FcntlFlock(sourcetest.OpenLockFile(t, lock).Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
			if err != nil {
				t.Fatal(err)
			}
			return "fcntl", os.Getpid()
		}},
		{"fcntl in another process", func(t *testing.T, lock string) (string, int) {
			return "fcntl", sourcetest.HoldFcntl(t, lock)
		}},
		{"ofd lock", func(t *testing.T, lock string) (string, int) {
			err := unix.FcntlFlock(sourcetest.OpenLockFile(t, lock).Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
			if err != nil {
				t.Fatal(err)
			}
			return "fcntl", 0 // OFD locks have no owner process
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log, lock := sourcetest.LockDir(t)
			kind, pid := c.hold(t, lock)
			err := CheckDBLock(log)
			if kind == "" {
				if err != nil {
					t.Fatalf("CheckDBLock = %v, want nil", err)
				}
				return
			}
			var le *DBLockError
			if !errors.Is(err, ErrDBLocked) || !errors.As(err, &le) || le.Kind != kind || le.Pid != pid || le.Lock != lock ||
				!strings.Contains(err.Error(), lock) {
				t.Fatalf("CheckDBLock = %#v (%v), want a %s lock by pid %d on %s", le, err, kind, pid, lock)
			}
		})
	}
}

// TestCheckDBLockLeavesNoTrace: no LOCK file is created, none is held after
// the probe, and names that are not regular files are not locks (a FIFO
// does not stall the probe, a symlink is not followed).
func TestCheckDBLockLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "000003.log")
	if err := CheckDBLock(log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "LOCK")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the probe created LOCK: %v", err)
	}
	// After a probe, a database can still take its exclusive lock at once.
	log, lock := sourcetest.LockDir(t)
	if err := CheckDBLock(log); err != nil {
		t.Fatal(err)
	}
	f := sourcetest.OpenLockFile(t, lock)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after the probe: %v", err)
	}
	// A symlink to a locked file is not followed.
	other := t.TempDir()
	if err := os.Symlink(lock, filepath.Join(other, "LOCK")); err != nil {
		t.Fatal(err)
	}
	if err := CheckDBLock(filepath.Join(other, "x.log")); err != nil {
		t.Fatalf("symlinked LOCK: %v", err)
	}
	// A FIFO: opened without blocking, then ignored.
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "LOCK"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- CheckDBLock(filepath.Join(fifoDir, "x.log")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("FIFO LOCK: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe blocked on a FIFO named LOCK")
	}
}

// BenchmarkCheckDBLock measures the probe every append (and every create
// through a --rw mount) pays: with no LOCK file, and with an unlocked one.
func BenchmarkCheckDBLock(b *testing.B) {
	dir := b.TempDir()
	log := filepath.Join(dir, "000003.log")
	b.Run("absent", func(b *testing.B) {
		for b.Loop() {
			if err := CheckDBLock(log); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("unlocked", func(b *testing.B) {
		for b.Loop() {
			if err := CheckDBLock(log); err != nil {
				b.Fatal(err)
			}
		}
	})
}
