package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// ErrReplaced is returned by Append when the table's path no longer names
// the file the table was made from (it was renamed, removed or replaced):
// records appended to the old file would not be where the caller looks,
// and writing to whatever the path names now would write to a file nobody
// opened. Refresh (or reopen) the table first.
var ErrReplaced = errors.New("index: the source path names another file now")

// appendDest is the storage an append or a repair writes through: a source
// whose bytes can be read, written at an offset, cut back and synced
// (source.Writer), with the append lock every recfs appender and repair
// of the same bytes takes (source.Locker), and its current stat.
// *local.File implements it.
type appendDest interface {
	io.ReaderAt
	source.Writer
	source.Locker
	Fstat() (source.FileStat, error)
}

var _ appendDest = (*local.File)(nil)

// lockWaits, when tests set it, is called by lockDest when it finds the
// append lock of a local file held by another and is about to wait for it.
var lockWaits func()

// wrapDest, when tests set it, wraps the destination every append writes
// through (to make writes fail).
var wrapDest func(appendDest) appendDest

// lockDest takes the append lock of d (for a local file, an exclusive
// flock, in this process or another: see local.Flock). The returned
// function releases it.
func lockDest(d appendDest) (unlock func(), err error) {
	if of, ok := d.(interface{ OSFile() *os.File }); ok && lockWaits != nil &&
		syscall.Flock(int(of.OSFile().Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == syscall.EWOULDBLOCK {
		lockWaits()
	}
	unlock, err = d.Lock()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if locksTaken != nil {
		locksTaken()
	}
	return unlock, nil
}

// lockFile is lockDest for the local file f.
func lockFile(f *os.File) (unlock func(), err error) {
	lf, err := local.New(f, f.Name()) // not closed: it shares f with the caller
	if err != nil {
		return nil, err
	}
	return lockDest(lf)
}

// writable returns the very file the table indexed as an append
// destination, never whatever its path names now: the table's own
// descriptor when it was opened read-write, else the same open file opened
// again through /proc/self/fd. done releases it.
func (t *Table) writable() (d appendDest, done func(), err error) {
	cur := t.localFile()
	if cur.Writable() {
		return cur, func() {}, nil // the table's descriptor: not closed here
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", cur.OSFile().Fd()), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// No /proc: the path, not following a symlink, and only if it is
		// still the same file.
		f, err = os.OpenFile(t.path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	if !local.SameFile(f, cur.OSFile()) {
		f.Close()
		return nil, nil, ErrReplaced
	}
	lf, err := local.New(f, t.path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return lf, func() { lf.Close() }, nil
}

// pathIsFile reports ErrReplaced unless the table's path still names d's
// file, looked at as refreshes do (the local source's StatPath).
func (t *Table) pathIsFile(d appendDest) error {
	pi, err := t.localFile().StatPath()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrReplaced, err)
	}
	st, err := d.Fstat()
	if err != nil {
		return err
	}
	ps, ok := pi.Sys().(*syscall.Stat_t)
	if !ok || uint64(ps.Dev) != st.Dev || ps.Ino != st.Ino {
		return ErrReplaced
	}
	return nil
}

// undo is what puts a file back exactly as it was before an append: its
// size, and the bytes from off on that the append may overwrite or cut (a
// recordio trailer block in tail, or a torn leveldb tail in the file
// backup, which may be too large to hold in memory).
type undo struct {
	size   int64
	off    int64
	tail   []byte
	backup string
	moved  *MovedTail // a tail cut before the append, reported once it succeeded
}

// set reports whether u describes a state (the zero undo means nothing was
// changed).
func (u undo) set() bool { return u.tail != nil || u.backup != "" }

// saveUndo records the file's state: size bytes, of which [off, size) may
// be overwritten.
func saveUndo(r io.ReaderAt, size, off int64) (undo, error) {
	u := undo{size: size, off: off, tail: make([]byte, size-off)}
	if _, err := r.ReadAt(u.tail, off); err != nil {
		return undo{}, fmt.Errorf("index: save the bytes an append may overwrite: %w", err)
	}
	return u, nil
}

// restore puts the file back as it was. A file that is already so is not
// written.
func (u undo) restore(f appendDest) error {
	var old io.ReaderAt = bytes.NewReader(u.tail)
	if u.backup != "" {
		b, err := os.Open(u.backup)
		if err != nil {
			return fmt.Errorf("index: reopen the saved torn tail: %w", err)
		}
		defer b.Close()
		old = b
	}
	n := u.size - u.off
	st, err := f.Fstat()
	if err != nil {
		return err
	}
	if st.Size == u.size && sameBytes(io.NewSectionReader(f, u.off, n), io.NewSectionReader(old, 0, n)) {
		return nil
	}
	if _, err := io.Copy(newOffsetWriter(f, u.off), io.NewSectionReader(old, 0, n)); err != nil {
		return err
	}
	if err := f.Truncate(u.size); err != nil {
		return err
	}
	return f.Sync()
}

// sameBytes reports whether a and b read the same bytes.
func sameBytes(a, b io.Reader) bool {
	var ab, bb [32 << 10]byte
	for {
		n, errA := io.ReadFull(a, ab[:])
		m, errB := io.ReadFull(b, bb[:])
		if n != m || !bytes.Equal(ab[:n], bb[:m]) {
			return false
		}
		if errA != nil || errB != nil {
			return (errA == io.EOF || errA == io.ErrUnexpectedEOF) && (errB == io.EOF || errB == io.ErrUnexpectedEOF)
		}
	}
}

// guardDBLock is local.CheckDBLock unless the table's options say to ignore
// database locks.
func (t *Table) guardDBLock() error {
	if t.opt.IgnoreDBLock {
		return nil
	}
	return checkDBLock(t.path)
}

// checkDBLock is local.CheckDBLock, told to dbProbes.
func checkDBLock(path string) error {
	if dbProbes != nil {
		dbProbes(path)
	}
	return local.CheckDBLock(path)
}

// dbProbes and locksTaken, when tests set them, are called for each probe
// of a database LOCK file (with the path of the file probed for) and each
// append lock taken.
var (
	dbProbes   func(path string)
	locksTaken func()
)
