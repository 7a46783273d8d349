package sourcetest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

// Helpers for tests of the database-LOCK probe (source/local) and of what
// it guards (index appends and creates).

// envLockChild makes the test binary, run as a child, hold a classic POSIX
// (fcntl F_SETLK) lock on the named file until its stdin closes: how
// leveldb C++, RocksDB and pebble lock, seen from another process.
const envLockChild = "RECFS_TEST_FCNTL_LOCK_CHILD"

// init serves HoldFcntl's child.
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

// HoldFcntl starts a child process (the test binary again) that holds a
// classic fcntl write lock on path, and returns its pid; cleanup ends it.
// The test binary must import sourcetest, whose init serves the child.
func HoldFcntl(t testing.TB, path string) int {
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

// LockDir returns a directory with a log file and an (unlocked) LOCK file.
func LockDir(t testing.TB) (log, lock string) {
	t.Helper()
	dir := t.TempDir()
	log, lock = filepath.Join(dir, "000003.log"), filepath.Join(dir, "LOCK")
	recfile.WriteLog(t, log, codectest.Records(3, 100, 'a'))
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return log, lock
}

// OpenLockFile opens lock for writing, as a database does, closed at cleanup.
func OpenLockFile(t testing.TB, lock string) *os.File {
	t.Helper()
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
