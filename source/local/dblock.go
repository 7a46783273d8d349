package local

import (
	"errors"
	"fmt"
	"path/filepath"
)

// dbLockName is the lock file leveldb, goleveldb, RocksDB and pebble keep in
// a database directory while the database is open.
const dbLockName = "LOCK"

// ErrDBLocked is returned when a change to a file is refused because the
// file's directory holds a database LOCK file that a running database has
// locked: its log belongs to that database, and bytes written behind its
// back are read as corruption (goleveldb: "batch corrupted"). Errors of
// this kind are *DBLockError values.
var ErrDBLocked = errors.New("local: database directory is locked by a running database")

// A DBLockError names the LOCK file found locked and how. It matches
// ErrDBLocked.
type DBLockError struct {
	Lock string // path of the LOCK file
	Kind string // "flock" (leveldb-Go) or "fcntl" (leveldb C++, RocksDB, pebble)
	Pid  int    // process holding an fcntl lock, when the kernel tells; else 0
}

// Error names the LOCK file, the kind of lock and, when known, its holder.
func (e *DBLockError) Error() string {
	who := ""
	if e.Pid > 0 {
		who = fmt.Sprintf(" by process %d", e.Pid)
	}
	return fmt.Sprintf("local: database lock file %s is held (%s lock%s): a running database owns this log", e.Lock, e.Kind, who)
}

// Unwrap returns ErrDBLocked.
func (e *DBLockError) Unwrap() error { return ErrDBLocked }

// CheckDBLock returns a *DBLockError when the directory of path holds a
// LOCK file that some open file (of any process, this one included) has
// locked; nil when there is no such file, it is not a regular file, or it
// is not locked. It never creates the LOCK file and holds no lock past the
// probe.
func CheckDBLock(path string) error {
	return probeDBLock(filepath.Join(filepath.Dir(path), dbLockName))
}
