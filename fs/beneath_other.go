//go:build !linux

package fs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Outside Linux, directory trees reach their source by path: there is no
// openat2 here, and the checks of (device, inode) against what was looked
// up are all that stands against a swap (see beneath_linux.go).

// rootDir is the root of a directory tree mount.
type rootDir struct{ path string }

func openRoot(path string) (*rootDir, statInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, statInfo{}, err
	}
	return &rootDir{path: path}, statOf(fi), nil
}

func (r *rootDir) close() error { return nil }

func (r *rootDir) abs(rel string) string {
	if rel == "" {
		return r.path
	}
	return filepath.Join(r.path, filepath.FromSlash(rel))
}

func (r *rootDir) stat(rel string) (statInfo, error) {
	fi, err := os.Lstat(r.abs(rel))
	if err != nil {
		return statInfo{}, err
	}
	return statOf(fi), nil
}

func (r *rootDir) openFile(rel string) (*os.File, statInfo, error) {
	return openRegular(r.abs(rel), os.O_RDONLY)
}

func openRegular(path string, flag int) (*os.File, statInfo, error) {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, statInfo{}, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = ErrStale
	}
	if err != nil {
		f.Close()
		return nil, statInfo{}, err
	}
	return f, statOf(fi), nil
}

// dirFD is a directory of the tree.
type dirFD struct {
	path string
	st   statInfo
}

func (r *rootDir) openDir(rel string, list bool) (*dirFD, error) {
	st, err := r.stat(rel)
	if err != nil {
		return nil, err
	}
	return &dirFD{path: r.abs(rel), st: st}, nil
}

func (d *dirFD) close() error { return nil }

func (d *dirFD) statAt(name string) (statInfo, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return statInfo{}, err
	}
	return statOf(fi), nil
}

func (d *dirFD) createAt(name string, perm uint32) (*os.File, statInfo, error) {
	return openRegular(filepath.Join(d.path, name), os.O_RDWR|os.O_CREATE|os.O_EXCL)
}

func (d *dirFD) sync() error {
	f, err := os.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (d *dirFD) unlinkAt(name string, st statInfo) error {
	return os.Remove(filepath.Join(d.path, name))
}

func (d *dirFD) names() ([]string, error) {
	f, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func resolveGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, ErrStale)
}

// linkCount is unknown here.
func linkCount(fi os.FileInfo) (uint64, bool) { return 0, false }
