package source

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Local is a local file as a Source: the one implementation that holds
// file-system state (the descriptor, memory maps, flock) and knows the
// identity of a file (device, inode, size, mtime and ctime).
//
// A Local never resolves a path: it is made from a descriptor the caller
// opened, which for recfs's mounts means a file opened beneath the mount
// root with openat2 (fs/beneath.go). The path it is given only names the
// file in its Identity and in messages.
type Local struct {
	f   *os.File
	fd  int // f's descriptor, for Fstat (taken once: os.File.Fd is not free)
	key string
	st  FileStat
}

// FileStat is what identifies one version of a local file.
type FileStat struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

// StatFile returns f's FileStat, with one fstat.
func StatFile(f *os.File) (FileStat, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileStat{}, err
	}
	st := FileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino = uint64(sys.Dev), uint64(sys.Ino)
		st.Ctime = sys.Ctim.Nano()
	}
	return st, nil
}

// StatFd is StatFile for a raw descriptor, for the per-read source check:
// it allocates nothing. path only names the file in the error.
func StatFd(fd int, path string) (FileStat, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return FileStat{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return FileStat{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, nil
}

// Version renders st as the Version of a local file's Identity.
func (st FileStat) Version() string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d", st.Dev, st.Ino, st.Size, st.Mtime, st.Ctime)
}

// NewLocal makes a Source of f, a regular file the caller opened; path
// names it (made absolute and cleaned, it is the Identity's Key). The
// Local takes f over: Close closes it.
func NewLocal(f *os.File, path string) (*Local, error) {
	st, err := StatFile(f)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &Local{f: f, fd: int(f.Fd()), key: filepath.Clean(path), st: st}, nil
}

// Now returns a Local naming the version the file has now (its current
// size and times, with one fstat) over the same descriptor: not reopened,
// and closed by whichever of the two is closed. A table that keeps one
// descriptor while its file grows takes one such Local per version.
func (l *Local) Now() (*Local, error) {
	st, err := l.Fstat()
	if err != nil {
		return nil, err
	}
	return &Local{f: l.f, fd: l.fd, key: l.key, st: st}, nil
}

// File returns the descriptor the Local reads.
func (l *Local) File() *os.File { return l.f }

// ReadAt reads the file.
func (l *Local) ReadAt(p []byte, off int64) (int, error) { return l.f.ReadAt(p, off) }

// Size is the file's size when the Local was made.
func (l *Local) Size() int64 { return l.st.Size }

// Identity names the file (its cleaned absolute path) and the version the
// Local was made from (device, inode, size, mtime, ctime).
func (l *Local) Identity() Identity { return Identity{Key: l.key, Version: l.st.Version()} }

// FileStat returns the stat of the version the Local names, typed (the
// fields its Identity's Version renders).
func (l *Local) FileStat() FileStat { return l.st }

// Fstat returns the file's stat now, with one fstat of the descriptor and
// no allocation (see FileStater). It must not be called once the
// descriptor may be closed: its number could name another file by then.
func (l *Local) Fstat() (FileStat, error) { return StatFd(l.fd, l.key) }

// Stat returns the file's current identity and size, with one fstat of the
// descriptor (never of the path).
func (l *Local) Stat() (Identity, int64, error) {
	st, err := StatFile(l.f)
	if err != nil {
		return Identity{}, 0, err
	}
	return Identity{Key: l.key, Version: st.Version()}, st.Size, nil
}

// Close closes the descriptor.
func (l *Local) Close() error { return l.f.Close() }

// Lock takes an exclusive flock of the file.
func (l *Local) Lock() (func(), error) { return Flock(l.f) }

// Map maps the bytes the Local covers.
func (l *Local) Map() (Mapping, error) { return MapFile(l.f, l.st.Size) }

// WriteAt writes to the file, when it was opened for writing.
func (l *Local) WriteAt(p []byte, off int64) (int, error) { return l.f.WriteAt(p, off) }

// Truncate cuts or extends the file.
func (l *Local) Truncate(size int64) error { return l.f.Truncate(size) }

// Sync makes the file's bytes durable.
func (l *Local) Sync() error { return l.f.Sync() }

// The capabilities of a Local.
var (
	_ Source     = (*Local)(nil)
	_ Stater     = (*Local)(nil)
	_ FileStater = (*Local)(nil)
	_ Closer     = (*Local)(nil)
	_ Locker     = (*Local)(nil)
	_ Mapper     = (*Local)(nil)
	_ Writer     = (*Local)(nil)
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
		return nil, fmt.Errorf("source: lock: %w", err)
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
