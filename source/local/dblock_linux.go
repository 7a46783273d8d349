package local

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// probeDBLock checks the LOCK file at lock for the two kinds of lock
// databases take on it: a POSIX record lock (fcntl F_SETLK: leveldb C++,
// RocksDB, pebble) and a BSD flock (goleveldb). The file is opened
// read-only without following a symlink and without blocking (a FIFO
// planted under the name cannot stall us), and is never created.
//
// POSIX and OFD locks are seen with F_OFD_GETLK, which reports a lock held
// by any other open file, also one of this process, without taking
// anything. flock locks cannot be queried: a non-blocking shared flock is
// tried and at once dropped, so the probe holds it for microseconds and
// only fails a database opening in that very instant.
func probeDBLock(lock string) error {
	fd, err := unix.Open(lock, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return nil // no LOCK, or a symlink: not a database's lock file
	case err != nil:
		return fmt.Errorf("local: probe database lock %s: %w", lock, &os.PathError{Op: "open", Path: lock, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("local: probe database lock %s: %w", lock, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	err = unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk)
	if errors.Is(err, unix.EINVAL) {
		// A kernel before 3.15: F_GETLK sees other processes' locks only.
		lk = unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
		err = unix.FcntlFlock(uintptr(fd), unix.F_GETLK, &lk)
	}
	if err != nil {
		return fmt.Errorf("local: probe database lock %s: fcntl: %w", lock, err)
	}
	if lk.Type != unix.F_UNLCK {
		return &DBLockError{Lock: lock, Kind: "fcntl", Pid: int(max(lk.Pid, 0))}
	}
	err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return &DBLockError{Lock: lock, Kind: "flock"}
	}
	if err != nil {
		return fmt.Errorf("local: probe database lock %s: flock: %w", lock, err)
	}
	return unix.Flock(fd, unix.LOCK_UN)
}
