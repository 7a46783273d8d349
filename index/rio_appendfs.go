package index

// The file-system surface of recordio appends and repairs, and its
// operating-system implementation. Journals are the sensitive part: they
// live next to the record file, in a directory other users may be able to
// write, so they are created only as new regular files (never through a
// symlink or over an existing entry) and read back only when they are
// regular files owned by someone trusted.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrUntrustedJournal means an entry at a recordio file's journal path is
// not a journal recfs can trust: a symlink, not a regular file, or owned by
// a user other than the record file's owner, the running user and root.
// Repairs ignore (and remove) such an entry instead of applying it.
var ErrUntrustedJournal = errors.New("index: untrusted recordio journal")

// maxJournalBytes bounds how much of a journal a repair reads: a journal
// holds one trailer block and 36 bytes of fields.
const maxJournalBytes = 1 << 30

// appendFS is the file-system surface the appender and the repair use.
type appendFS interface {
	// OpenFile opens the record file.
	OpenFile(name string, flag int, perm fs.FileMode) (appendFile, error)
	// ReadJournal reads the journal at name if it can be trusted as the
	// journal of the record file rec (ErrUntrustedJournal otherwise).
	ReadJournal(name string, rec appendFile) ([]byte, error)
	// CreateJournal creates a new journal at name; it fails if anything,
	// even a dangling symlink, is there already.
	CreateJournal(name string) (appendFile, error)
	Remove(name string) error
	SyncDir(dir string) error
}

// appendFile is an open file of an appendFS.
type appendFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
	Size() (int64, error)
	// Lock takes an exclusive advisory lock (flock) of the file, released
	// when the file is closed.
	Lock() error
}

// osFS is the operating system.
type osFS struct{}

// osFile is an *os.File as an appendFile.
type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f osFile) Lock() error { return flockEx(f.File) }

// destFile is an append destination as an appendFile, for an appender or
// a repair that runs under its caller's append lock: Lock is refused (the
// caller holds the lock already) and Close leaves the destination open.
type destFile struct{ appendDest }

func (f destFile) Size() (int64, error) {
	st, err := f.Fstat()
	return st.Size, err
}

func (f destFile) Lock() error  { return errLockHeld }
func (f destFile) Close() error { return nil }

// errLockHeld is destFile.Lock's refusal.
var errLockHeld = errors.New("index: the append lock is held by the caller")

// flockEx takes an exclusive flock of f, retrying after signals.
func flockEx(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (appendFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) ReadJournal(name string, rec appendFile) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symlink", ErrUntrustedJournal, name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUntrustedJournal, name)
	}
	owner, ok := fileOwner(fi)
	if ok && !trustedOwner(owner, rec) {
		return nil, fmt.Errorf("%w: %s belongs to uid %d", ErrUntrustedJournal, name, owner)
	}
	if fi.Size() > maxJournalBytes {
		return nil, fmt.Errorf("%w: %s has %d bytes", ErrUntrustedJournal, name, fi.Size())
	}
	return io.ReadAll(io.LimitReader(f, maxJournalBytes))
}

// fileOwner returns the uid that owns fi's file.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// trustedOwner reports whether a journal owned by uid may be applied to
// the record file rec: root, the running user and rec's owner may write
// rec anyway, so a journal of theirs asks for nothing they could not do.
func trustedOwner(uid uint32, rec appendFile) bool {
	if uid == 0 || int(uid) == os.Geteuid() {
		return true
	}
	var of *os.File
	switch r := rec.(type) {
	case osFile:
		of = r.File
	case destFile:
		if lf, ok := r.appendDest.(interface{ OSFile() *os.File }); ok {
			of = lf.OSFile()
		}
	}
	if of == nil {
		return false
	}
	fi, err := of.Stat()
	if err != nil {
		return false
	}
	owner, ok := fileOwner(fi)
	return ok && owner == uid
}

func (osFS) CreateJournal(name string) (appendFile, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
