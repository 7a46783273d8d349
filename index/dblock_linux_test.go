package index

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// envLockChild makes the test binary, run as a child, hold a classic POSIX
// (fcntl F_SETLK) lock on the named file until its stdin closes: how
// leveldb C++, RocksDB and pebble lock, seen from another process.
const envLockChild = "RECFS_TEST_FCNTL_LOCK_CHILD"

func init() {
	path := os.Getenv(envLockChild)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
	}
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// holdFcntlInChild starts a child process that holds an fcntl write lock
// on path, and returns its pid; cleanup ends it.
func holdFcntlInChild(t *testing.T, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envLockChild+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line := make([]byte, 7)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "locked\n" {
		t.Fatalf("lock child: %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// lockDir returns a directory with a log file and an (unlocked) LOCK file.
func lockDir(t *testing.T) (log, lock string) {
	t.Helper()
	dir := t.TempDir()
	log, lock = filepath.Join(dir, "000003.log"), filepath.Join(dir, dbLockName)
	recfile.WriteLog(t, log, codectest.Records(3, 100, 'a'))
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return log, lock
}

// openLockFile opens lock for writing, as a database does, closed at cleanup.
func openLockFile(t *testing.T, lock string) *os.File {
	t.Helper()
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCheckDBLock(t *testing.T) {
	cases := []struct {
		name string
		hold func(t *testing.T, lock string) (kind string, pid int) // "" kind: not locked
	}{
		{"unlocked", func(*testing.T, string) (string, int) { return "", 0 }},
		{"flock exclusive (goleveldb)", func(t *testing.T, lock string) (string, int) {
			if err := unix.Flock(int(openLockFile(t, lock).Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return "flock", 0
		}},
		{"flock shared (goleveldb read-only)", func(t *testing.T, lock string) (string, int) {
			if err := unix.Flock(int(openLockFile(t, lock).Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return "", 0 // a read-only database writes no log
		}},
		{"fcntl in this process (pebble's F_SETLK)", func(t *testing.T, lock string) (string, int) {
			err := unix.FcntlFlock(openLockFile(t, lock).Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
			if err != nil {
				t.Fatal(err)
			}
			return "fcntl", os.Getpid()
		}},
		{"fcntl in another process", func(t *testing.T, lock string) (string, int) {
			return "fcntl", holdFcntlInChild(t, lock)
		}},
		{"ofd lock", func(t *testing.T, lock string) (string, int) {
			err := unix.FcntlFlock(openLockFile(t, lock).Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
			if err != nil {
				t.Fatal(err)
			}
			return "fcntl", 0 // OFD locks have no owner process
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log, lock := lockDir(t)
			kind, pid := c.hold(t, lock)
			err := checkDBLock(log)
			if kind == "" {
				if err != nil {
					t.Fatalf("checkDBLock = %v, want nil", err)
				}
				return
			}
			var le *DBLockError
			if !errors.Is(err, ErrDBLocked) || !errors.As(err, &le) || le.Kind != kind || le.Pid != pid || le.Lock != lock ||
				!strings.Contains(err.Error(), lock) {
				t.Fatalf("checkDBLock = %#v (%v), want a %s lock by pid %d on %s", le, err, kind, pid, lock)
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
	if err := checkDBLock(log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, dbLockName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the probe created LOCK: %v", err)
	}
	// After a probe, a database can still take its exclusive lock at once.
	log, lock := lockDir(t)
	if err := checkDBLock(log); err != nil {
		t.Fatal(err)
	}
	f := openLockFile(t, lock)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after the probe: %v", err)
	}
	// A symlink to a locked file is not followed.
	other := t.TempDir()
	if err := os.Symlink(lock, filepath.Join(other, dbLockName)); err != nil {
		t.Fatal(err)
	}
	if err := checkDBLock(filepath.Join(other, "x.log")); err != nil {
		t.Fatalf("symlinked LOCK: %v", err)
	}
	// A FIFO: opened without blocking, then ignored.
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, dbLockName), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- checkDBLock(filepath.Join(fifoDir, "x.log")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("FIFO LOCK: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe blocked on a FIFO named LOCK")
	}
}

// TestCreateRefusedByDBLock: no new record file appears in the directory
// of a running database, unless IgnoreDBLock.
func TestCreateRefusedByDBLock(t *testing.T) {
	ctx := context.Background()
	log, lock := lockDir(t)
	unix.Flock(int(openLockFile(t, lock).Fd()), unix.LOCK_EX)
	path := filepath.Join(filepath.Dir(log), "new.log")
	if _, err := Create(ctx, path, codec.LevelDB, false, Options{CacheDir: "-"}); !errors.Is(err, ErrDBLocked) {
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
			log, lock := lockDir(t)
			good, _ := os.ReadFile(log)
			recfile.AppendLog(t, log, bytes.Repeat([]byte("T"), 70000))
			whole, _ := os.ReadFile(log)
			torn := whole[:len(good)+50000] // a record the database is writing right now
			os.WriteFile(log, torn, 0o644)
			if lockKind == "flock" {
				unix.Flock(int(openLockFile(t, lock).Fd()), unix.LOCK_EX)
			} else {
				holdFcntlInChild(t, lock)
			}
			tb, err := Open(ctx, log, Options{CacheDir: "-", Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			_, err = tb.Append(ctx, [][]byte{[]byte("x")}, AppendOptions{Sync: true})
			if !errors.Is(err, ErrDBLocked) || !strings.Contains(err.Error(), lock) {
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

// BenchmarkCheckDBLock measures the probe every append (and every create
// through a --rw mount) pays: with no LOCK file, and with an unlocked one.
func BenchmarkCheckDBLock(b *testing.B) {
	dir := b.TempDir()
	log := filepath.Join(dir, "000003.log")
	b.Run("absent", func(b *testing.B) {
		for b.Loop() {
			if err := checkDBLock(log); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := os.WriteFile(filepath.Join(dir, dbLockName), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("unlocked", func(b *testing.B) {
		for b.Loop() {
			if err := checkDBLock(log); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCreateFileRefusedByDBLock: a record file the caller made (mkdir in a
// --rw mount) is not filled in the directory of a running database, unless
// IgnoreDBLock: CreateFile refuses before writing anything.
func TestCreateFileRefusedByDBLock(t *testing.T) {
	ctx := context.Background()
	log, lock := lockDir(t)
	unix.Flock(int(openLockFile(t, lock).Fd()), unix.LOCK_EX)
	for _, ff := range []codec.Format{codec.LevelDB, codec.RecordIO} {
		path := filepath.Join(filepath.Dir(log), "new-"+ff.String())
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if tb, err := CreateFile(ctx, f, path, ff, false, Options{CacheDir: "-"}); !errors.Is(err, ErrDBLocked) {
			if tb != nil {
				tb.Close()
			}
			t.Fatalf("%s: create in a locked database directory: %v", ff, err)
		}
		if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
			t.Fatalf("%s: the refused create wrote into the file: %v %v", ff, fi.Size(), err)
		}
		tb, err := CreateFile(ctx, f, path, ff, false, Options{CacheDir: "-", IgnoreDBLock: true})
		if err != nil {
			t.Fatal(err)
		}
		tb.Close()
	}
}
