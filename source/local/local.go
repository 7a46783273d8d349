// Package local is the storage seam's implementation for local files: a
// descriptor as a source.Source, with the identity of a file (device,
// inode, size, mtime, ctime), memory maps, the append lock (flock) and the
// probe of a database directory's LOCK file.
package local

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/recfs/recfs/source"
)

// File is a local file as a source.Source: the one implementation that holds
// file-system state (the descriptor, memory maps, flock) and knows the
// identity of a file (device, inode, size, mtime and ctime).
//
// A File never resolves a path: it is made from a descriptor the caller
// opened, which for recfs's mounts means a file opened beneath the mount
// root with openat2 (fs/beneath.go). The path it is given only names the
// file in its Identity and in messages.
type File struct {
	f   *os.File
	fd  int // f's descriptor, for Fstat (taken once: os.File.Fd is not free)
	key string
	st  source.FileStat
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
// File takes f over: Close closes it.
func New(f *os.File, path string) (*File, error) {
	st, err := StatFile(f)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &File{f: f, fd: int(f.Fd()), key: filepath.Clean(path), st: st}, nil
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
	return &File{f: l.f, fd: l.fd, key: l.key, st: st}, nil
}

// OSFile returns the descriptor the File reads.
func (l *File) OSFile() *os.File { return l.f }

// ReadAt reads the file.
func (l *File) ReadAt(p []byte, off int64) (int, error) { return l.f.ReadAt(p, off) }

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
// no allocation (see FileStater). It must not be called once the
// descriptor may be closed: its number could name another file by then.
func (l *File) Fstat() (source.FileStat, error) { return StatFd(l.fd, l.key) }

// Stat returns the file's current identity and size, with one fstat of the
// descriptor (never of the path).
func (l *File) Stat() (source.Identity, int64, error) {
	st, err := StatFile(l.f)
	if err != nil {
		return source.Identity{}, 0, err
	}
	return source.Identity{Key: l.key, Version: st.Version()}, st.Size, nil
}

// Close closes the descriptor.
func (l *File) Close() error { return l.f.Close() }

// Lock takes an exclusive flock of the file.
func (l *File) Lock() (func(), error) { return Flock(l.f) }

// Map maps the bytes the File covers.
func (l *File) Map() (source.Mapping, error) { return MapFile(l.f, l.st.Size) }

// WriteAt writes to the file, when it was opened for writing.
func (l *File) WriteAt(p []byte, off int64) (int, error) { return l.f.WriteAt(p, off) }

// Truncate cuts or extends the file.
func (l *File) Truncate(size int64) error { return l.f.Truncate(size) }

// Sync makes the file's bytes durable.
func (l *File) Sync() error { return l.f.Sync() }

// The capabilities of a File.
var (
	_ source.Source     = (*File)(nil)
	_ source.Stater     = (*File)(nil)
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
