// Package local is the storage seam's implementation for local files: a
// descriptor as a source.Source, with the identity of a file (device,
// inode, size, mtime, ctime), memory maps, the append lock (flock) and the
// probe of a database directory's LOCK file.
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/recfs/recfs/source"
)

// File is a local file as a source.Source: the one implementation that holds
// file-system state (the descriptor, memory maps, flock) and knows the
// identity of a file (device, inode, size, mtime and ctime).
//
// A File reads a descriptor the caller opened, which for recfs's mounts
// means a file opened beneath the mount root with openat2 (fs/beneath.go).
// The path it is given names the file in its Identity and in messages;
// Stat and Reopen look at it again (through the reopen function of
// NewReopening when there is one, which resolves it as safely as the first
// open did) to tell a file that grew from one replaced at its path.
type File struct {
	d      *desc
	key    string
	st     source.FileStat
	reopen func() (*os.File, error) // opens the file now at key (read-only); nil: OpenPath
	// statPath, when set, returns the attributes of what is now at key,
	// resolved as reopen resolves it but without opening it.
	statPath func() (os.FileInfo, error)
}

// desc is a descriptor shared by the Files of its versions (Now), with its
// count of users: the hold of whoever opened it plus the fstats in flight,
// so that a File closed while another goroutine checks it never stats a
// descriptor number reused for another file: the descriptor is closed when
// the last use ends. It costs two atomic operations an Fstat.
type desc struct {
	f      *os.File
	fd     int          // f's descriptor, for Fstat (taken once: os.File.Fd is not free)
	refs   atomic.Int64 // the hold (1) plus fstats in flight; 0 once closed
	closed atomic.Bool  // the hold was released
	rw     bool         // f was opened read-write
}

// acquire takes a use of the descriptor; false once it is closed.
func (d *desc) acquire() bool {
	for {
		n := d.refs.Load()
		if n <= 0 {
			return false
		}
		if d.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release ends a use, or the hold; the last one closes the file.
func (d *desc) release() error {
	if d.refs.Add(-1) == 0 {
		return d.f.Close()
	}
	return nil
}

// StatFile returns f's FileStat, with one fstat.
func StatFile(f *os.File) (source.FileStat, error) {
	fi, err := f.Stat()
	if err != nil {
		return source.FileStat{}, err
	}
	st := source.FileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino = uint64(sys.Dev), uint64(sys.Ino)
		st.Ctime = sys.Ctim.Nano()
	}
	return st, nil
}

// StatFd is StatFile for a raw descriptor, for the per-read source check:
// it allocates nothing. path only names the file in the error.
func StatFd(fd int, path string) (source.FileStat, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return source.FileStat{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return source.FileStat{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, nil
}

// New makes a source.Source of f, a regular file the caller opened; path
// names it (made absolute and cleaned, it is the Identity's Key). The
// File takes f over: Close closes it. Stat and Reopen look at path again
// with OpenPath (no symlink followed).
func New(f *os.File, path string) (*File, error) { return NewReopening(f, path, nil) }

// NewReopening is New for a file whose path must be looked at again in a
// way of the caller's (beneath a mount's root, say): reopen opens the file
// now at path, read-only. A nil reopen is New's OpenPath.
func NewReopening(f *os.File, path string, reopen func() (*os.File, error)) (*File, error) {
	st, err := StatFile(f)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	d := &desc{f: f, fd: int(f.Fd()), rw: ReadWrite(f)}
	d.refs.Store(1)
	return &File{d: d, key: filepath.Clean(path), st: st, reopen: reopen}, nil
}

// NewReopeningStat is NewReopening with stat, which returns the
// attributes of what is now at path, resolved the way reopen resolves it
// (a symbolic link or anything else than the file reopen would open must
// come back as itself, or as an error), but without opening anything:
// StatPath uses it, so that the check before every append costs one
// system call, not an open, an fstat and a close.
func NewReopeningStat(f *os.File, path string, reopen func() (*os.File, error), stat func() (os.FileInfo, error)) (*File, error) {
	l, err := NewReopening(f, path, reopen)
	if err != nil {
		return nil, err
	}
	l.statPath = stat
	return l, nil
}

// Now returns a File naming the version the file has now (its current
// size and times, with one fstat) over the same descriptor: not reopened,
// and closed by whichever of the two is closed. A table that keeps one
// descriptor while its file grows takes one such File per version.
func (l *File) Now() (*File, error) {
	st, err := l.Fstat()
	if err != nil {
		return nil, err
	}
	return &File{d: l.d, key: l.key, st: st, reopen: l.reopen, statPath: l.statPath}, nil
}

// SameDescriptor reports whether l and o read one descriptor (one is the
// other's Now).
func (l *File) SameDescriptor(o *File) bool { return l.d == o.d }

// OSFile returns the descriptor the File reads.
func (l *File) OSFile() *os.File { return l.d.f }

// Writable reports whether the descriptor was opened read-write.
func (l *File) Writable() bool { return l.d.rw }

// ReadAt reads the file.
func (l *File) ReadAt(p []byte, off int64) (int, error) { return l.d.f.ReadAt(p, off) }

// Size is the file's size when the File was made.
func (l *File) Size() int64 { return l.st.Size }

// Identity names the file (its cleaned absolute path) and the version the
// File was made from (device, inode, size, mtime, ctime).
func (l *File) Identity() source.Identity {
	return source.Identity{Key: l.key, Version: l.st.Version()}
}

// FileStat returns the stat of the version the File names, typed (the
// fields its Identity's Version renders).
func (l *File) FileStat() source.FileStat { return l.st }

// Fstat returns the file's stat now, with one fstat of the descriptor and
// no allocation (see FileStater). Once the File is closed it fails with
// os.ErrClosed: an fstat running meanwhile holds the descriptor open, so
// its number never names another file under it.
func (l *File) Fstat() (source.FileStat, error) {
	if !l.d.acquire() {
		return source.FileStat{}, &os.PathError{Op: "fstat", Path: l.key, Err: os.ErrClosed}
	}
	defer l.d.release()
	return StatFd(l.d.fd, l.key)
}

// StatPath returns the attributes of the file now at the File's path
// (through the stat function of NewReopeningStat, else the reopen function
// of NewReopening when there is one), which may be another file than the
// one the File reads.
func (l *File) StatPath() (os.FileInfo, error) {
	if l.statPath != nil {
		return l.statPath()
	}
	if l.reopen == nil {
		return os.Stat(l.key)
	}
	f, err := l.reopen()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Stat returns the identity and size of the file now at the File's path
// (see StatPath): a file that grew keeps its device and inode, one that
// replaced it at its path has others. When the path names nothing (or
// nothing regular), it is the descriptor's. A closed File fails with
// os.ErrClosed.
func (l *File) Stat() (source.Identity, int64, error) {
	if l.d.closed.Load() {
		return source.Identity{}, 0, &os.PathError{Op: "stat", Path: l.key, Err: os.ErrClosed}
	}
	fi, err := l.StatPath()
	var st source.FileStat
	if err == nil && fi.Mode().IsRegular() {
		st = source.FileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.Dev, st.Ino, st.Ctime = uint64(sys.Dev), uint64(sys.Ino), sys.Ctim.Nano()
		}
	} else if st, err = l.Fstat(); err != nil {
		return source.Identity{}, 0, err
	}
	return source.Identity{Key: l.key, Version: st.Version()}, st.Size, nil
}

// Reopen returns the File of the file now at the File's path: the same
// descriptor's version now (Now) when that is still the file read, or when
// the path names nothing (StatPath fails); else a File of the file that
// replaced it, opened as the first (read-write when the first was, where
// it may; never through a symlink), with the same way of reopening.
func (l *File) Reopen(ctx context.Context) (source.Source, error) {
	var (
		f   *os.File
		err error
	)
	if l.reopen != nil {
		f, err = l.reopen()
	} else {
		f, err = OpenPath(l.key, l.d.rw, true)
	}
	if err != nil {
		if _, serr := l.StatPath(); serr != nil {
			return l.Now() // nothing at the path: the descriptor's file is the one
		}
		return nil, err // something this File may not open (a symlink, say)
	}
	if SameFile(f, l.d.f) {
		f.Close()
		return l.Now()
	}
	n, err := NewReopeningStat(f, l.key, l.reopen, l.statPath)
	if err != nil {
		f.Close()
		return nil, err
	}
	return n, nil
}

// Close lets go of the descriptor (of every version Now made of it): it is
// closed once the fstats running on it end. Closing twice is closing once.
func (l *File) Close() error {
	if !l.d.closed.CompareAndSwap(false, true) {
		return nil
	}
	return l.d.release()
}

// Lock takes an exclusive flock of the file.
func (l *File) Lock() (func(), error) { return Flock(l.d.f) }

// Map maps the bytes the File covers.
func (l *File) Map() (source.Mapping, error) { return MapFile(l.d.f, l.st.Size) }

// WriteAt writes to the file, when it was opened for writing.
func (l *File) WriteAt(p []byte, off int64) (int, error) { return l.d.f.WriteAt(p, off) }

// Truncate cuts or extends the file.
func (l *File) Truncate(size int64) error { return l.d.f.Truncate(size) }

// Sync makes the file's bytes durable.
func (l *File) Sync() error { return l.d.f.Sync() }

// The capabilities of a File.
var (
	_ source.Source     = (*File)(nil)
	_ source.Stater     = (*File)(nil)
	_ source.Reopener   = (*File)(nil)
	_ source.FileStater = (*File)(nil)
	_ source.Closer     = (*File)(nil)
	_ source.Locker     = (*File)(nil)
	_ source.Mapper     = (*File)(nil)
	_ source.Writer     = (*File)(nil)
)

// Flock takes the append lock of f: an exclusive flock, retried after
// signals, which every recfs appender and repair of the file takes. The
// returned function releases it.
func Flock(f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("local: lock: %w", err)
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
