//go:build linux

package fs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every access of a directory tree mount to its source goes through the
// root directory's descriptor: paths are resolved beneath it and no
// symbolic link is followed at any component (openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or, on kernels without openat2, a
// walk of O_NOFOLLOW opens from the root). A user who can write inside the
// tree therefore cannot make the daemon open anything outside it by
// swapping a file or directory for a symbolic link after the kernel looked
// it up; and callers compare the (device, inode) of what they opened with
// what was looked up, so a swap inside the tree gives ErrStale, never the
// other object's bytes.

// rootDir is the open root of a directory tree mount.
type rootDir struct {
	fd   int
	path string // for messages and for paths handed to callers
}

// resolveFlags are the openat2 resolve flags of every open beneath the root.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// noOpenat2 is set once openat2 has failed with ENOSYS: opens then walk
// component by component.
var noOpenat2 atomic.Bool

// openRoot opens the directory at path (which callers resolved already)
// as the root of a tree and returns its attributes.
func openRoot(path string) (*rootDir, statInfo, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, statInfo{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	st, err := fstatInfo(fd)
	if err != nil {
		unix.Close(fd)
		return nil, statInfo{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return &rootDir{fd: fd, path: path}, st, nil
}

// close releases the root's descriptor.
func (r *rootDir) close() error { return unix.Close(r.fd) }

// abs returns the path of rel for messages.
func (r *rootDir) abs(rel string) string {
	if rel == "" {
		return r.path
	}
	return filepath.Join(r.path, filepath.FromSlash(rel))
}

// openFD opens rel (slash-separated, "" for the root) beneath the root
// with flags, following no symbolic link. A symbolic link as the last
// component gives ELOOP, except with O_PATH, which opens the link itself.
func (r *rootDir) openFD(rel string, flags int, mode uint32) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	name := rel
	if name == "" {
		name = "."
	}
	if !noOpenat2.Load() {
		for try := 0; ; try++ {
			fd, err := unix.Openat2(r.fd, name, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveFlags})
			if err == unix.EAGAIN && try < 8 {
				continue // a rename raced the resolution
			}
			if err != unix.ENOSYS {
				return fd, err
			}
			noOpenat2.Store(true)
			break
		}
	}
	return r.walk(rel, flags, mode)
}

// walk is openFD without openat2: every directory on the way is opened
// with O_NOFOLLOW|O_DIRECTORY from the previous one.
func (r *rootDir) walk(rel string, flags int, mode uint32) (int, error) {
	if rel == "" {
		return unix.Openat(r.fd, ".", flags, mode)
	}
	comps := strings.Split(rel, "/")
	dir := r.fd
	defer func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}()
	for _, c := range comps[:len(comps)-1] {
		if c == "" || c == "." || c == ".." {
			return -1, unix.EXDEV
		}
		fd, err := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if dir != r.fd {
			unix.Close(dir)
		}
		dir = fd
	}
	last := comps[len(comps)-1]
	if last == "" || last == "." || last == ".." {
		return -1, unix.EXDEV
	}
	return unix.Openat(dir, last, flags, mode)
}

// stat returns the attributes of rel without following a symbolic link
// at any component (lstat semantics for the last one).
func (r *rootDir) stat(rel string) (statInfo, error) {
	fd, err := r.openFD(rel, unix.O_PATH, 0)
	if err != nil {
		return statInfo{}, err
	}
	defer unix.Close(fd)
	return fstatInfo(fd)
}

// openFile opens the regular file rel read-only and returns it with its
// attributes. Anything else than a regular file gives ErrStale.
func (r *rootDir) openFile(rel string) (*os.File, statInfo, error) {
	// O_NONBLOCK: a FIFO swapped in must not hang the open.
	fd, err := r.openFD(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, statInfo{}, err
	}
	return fileOf(fd, r.abs(rel))
}

// fileOf wraps fd, a regular file, as an *os.File with its attributes; it
// closes fd if it is not one.
func fileOf(fd int, path string) (*os.File, statInfo, error) {
	st, err := fstatInfo(fd)
	if err == nil && st.typ != typeReg {
		err = ErrStale
	}
	if err != nil {
		unix.Close(fd)
		return nil, statInfo{}, err
	}
	return os.NewFile(uintptr(fd), path), st, nil
}

// dirFD is an open directory beneath the root.
type dirFD struct {
	fd   int
	path string
	st   statInfo
}

// openDir opens the directory rel; list asks for a descriptor that can be
// read (listings) rather than one that only resolves names.
func (r *rootDir) openDir(rel string, list bool) (*dirFD, error) {
	flags := unix.O_PATH | unix.O_DIRECTORY
	if list {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	fd, err := r.openFD(rel, flags, 0)
	if err != nil {
		return nil, err
	}
	st, err := fstatInfo(fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &dirFD{fd: fd, path: r.abs(rel), st: st}, nil
}

func (d *dirFD) close() error { return unix.Close(d.fd) }

// statAt returns the attributes of the entry name (not following a link).
func (d *dirFD) statAt(name string) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return statInfo{}, err
	}
	return statOfUnix(&st), nil
}

// createAt creates the regular file name (which must not exist, not even
// as a symbolic link) for reading and writing.
func (d *dirFD) createAt(name string, perm uint32) (*os.File, statInfo, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, statInfo{}, err
	}
	return fileOf(fd, filepath.Join(d.path, name))
}

// sync fsyncs the directory, so that the entries made in it reach stable
// storage. It opens the directory again through its own descriptor (one
// that only resolves names cannot be synced).
func (d *dirFD) sync() error {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// unlinkAt removes the entry name if it is still the file with identity
// st.
func (d *dirFD) unlinkAt(name string, st statInfo) error {
	cur, err := d.statAt(name)
	if err != nil {
		return err
	}
	if cur.dev != st.dev || cur.ino != st.ino {
		return ErrStale
	}
	return unix.Unlinkat(d.fd, name, 0)
}

// names lists the directory (a descriptor opened with list set).
func (d *dirFD) names() ([]string, error) {
	nfd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(nfd)
	f := os.NewFile(uintptr(nfd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// fstatInfo returns the attributes of an open descriptor.
func fstatInfo(fd int) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return statInfo{}, err
	}
	return statOfUnix(&st), nil
}

// statOfUnix converts a stat buffer.
func statOfUnix(st *unix.Stat_t) statInfo {
	return statInfo{
		dev: uint64(st.Dev), ino: uint64(st.Ino), uid: st.Uid, gid: st.Gid,
		mode: st.Mode & 0o777, typ: st.Mode & unix.S_IFMT, size: st.Size,
		atime: time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec)),
		mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)),
	}
}

// resolveGone reports whether err from a resolution beneath the root says
// that the path no longer leads where it did: a component is missing, no
// longer a directory, or a symbolic link.
func resolveGone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) ||
		errors.Is(err, unix.EXDEV) || errors.Is(err, ErrStale)
}

// linkCount returns the number of names of the file fi describes.
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
