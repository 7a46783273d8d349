package index

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// How cache files are opened. A cache directory may be shared with other
// users (a 1777 --cache-dir), so nothing found in it is trusted by name:
//
//   - the directory is used only if it belongs to the running user and no
//     one else may write to it; otherwise a per-user subdirectory
//     "recfs-<uid>" inside it is created 0700 and used after checking that it
//     is a real directory of ours that no one else may write to; if that
//     fails, saved tables are skipped (one log line per directory);
//   - cache files are opened relative to the directory's descriptor with
//     O_NOFOLLOW (a symlink is refused) and O_NONBLOCK (a FIFO cannot hang
//     the open), and used only if they are regular files of ours, not
//     writable by others, no larger than a bound derived from the source
//     size; no more than that bound is ever read;
//   - new files are written 0600 to a fresh O_EXCL temporary name,
//     fsynced, renamed into place, and the directory (ours, checked above)
//     fsynced: after a crash the name holds the whole table or the one it
//     replaced, never a renamed-but-empty or torn file. (One that is torn
//     anyway, by a disk or another tool, fails loadCache's checks and is
//     rebuilt with a log line.)

// errUnsafeCache is returned for a cache directory or file that is not
// safely ours.
var errUnsafeCache = errors.New("index: cache file or directory not owned by this user or writable by others")

// errCacheTooLarge is returned for a cache file larger than its bound.
var errCacheTooLarge = errors.New("index: cache file larger than its source allows")

// cacheFileBound returns the largest cache file accepted for a source of
// size bytes: a fixed allowance plus 24 bytes a source byte. The densest
// tables need far less (12 bytes a leveldb record of at least 7 bytes, 8
// bytes a recordio item of at least one packed byte); a table that does not
// fit (a heavily compressed recordio file of tiny items) is not saved.
func cacheFileBound(size int64) int64 {
	const fixed = 1 << 16
	if size < 0 {
		return fixed
	}
	if size > (1<<62)/24 {
		return 1 << 62
	}
	return fixed + 24*size
}

// usedResolution is how stale a cache file's modification time may be
// before a load marks it used again (one metadata write an hour at most).
const usedResolution = time.Hour

// cacheDirWarned holds the directories already reported as unusable, so
// each is logged once.
var cacheDirWarned sync.Map

// openCacheDir opens the directory where saved tables for dir live (dir
// itself or its per-user subdirectory, see above). With create it makes
// missing directories (0700); without, a missing directory is an error.
func openCacheDir(dir string, create bool) (*os.File, error) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	d := os.NewFile(uintptr(fd), dir)
	if ok, err := privateDir(fd, 0o022); err != nil {
		d.Close()
		return nil, err
	} else if ok {
		return d, nil
	}
	// Shared, or someone else's: use our own subdirectory.
	sub := fmt.Sprintf("recfs-%d", os.Geteuid())
	if create {
		if err := unix.Mkdirat(fd, sub, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			d.Close()
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(dir, sub), Err: err}
		}
	}
	sfd, err := unix.Openat(fd, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	d.Close()
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, sub), Err: err}
		}
		warnCacheDir(filepath.Join(dir, sub), err)
		return nil, errUnsafeCache
	}
	sd := os.NewFile(uintptr(sfd), filepath.Join(dir, sub))
	if ok, err := privateDir(sfd, 0o077); err != nil || !ok {
		sd.Close()
		warnCacheDir(sd.Name(), errUnsafeCache)
		return nil, errUnsafeCache
	}
	return sd, nil
}

// privateDir reports whether fd is a directory owned by the running user
// with none of the permission bits in others set.
func privateDir(fd int, others uint32) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false, errUnsafeCache
	}
	return int(st.Uid) == os.Geteuid() && st.Mode&others == 0, nil
}

// warnCacheDir logs, once per directory, that saved tables are skipped.
func warnCacheDir(dir string, err error) {
	if _, dup := cacheDirWarned.LoadOrStore(dir, true); dup {
		return
	}
	logrus.WithField("dir", dir).Warnf("index: not using saved tables: %v", err)
}

// openCacheFile opens the cache file at path for reading, if it is ours
// (a regular file of this user, not writable by others) and not larger
// than bound, and returns it, its size and the path it opened (in the
// per-user subdirectory of a shared directory). It marks the file used
// (its modification time, which pruning reads).
func openCacheFile(path string, bound int64) (*os.File, int64, string, error) {
	d, err := openCacheDir(filepath.Dir(path), false)
	if err != nil {
		return nil, 0, "", err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), filepath.Base(path),
		unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, "", &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, 0, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		f.Close()
		return nil, 0, "", errUnsafeCache
	}
	if st.Size > bound {
		f.Close()
		return nil, 0, "", errCacheTooLarge
	}
	used := filepath.Join(d.Name(), filepath.Base(path))
	if time.Since(time.Unix(st.Mtim.Unix())) > usedResolution {
		now := unix.NsecToTimeval(time.Now().UnixNano())
		_ = unix.Futimes(fd, []unix.Timeval{now, now})
	}
	return f, st.Size, used, nil
}

// writeCacheFile writes b to the cache file at path atomically: to a new
// 0600 temporary file (O_EXCL) in the same directory, renamed into place.
func writeCacheFile(path string, b []byte) (string, error) {
	return writeCacheFileFrom(path, bytes.NewReader(b))
}

// writeCacheFileFrom is writeCacheFile of what r reads; when r fails, no
// file is left.
func writeCacheFileFrom(path string, r io.Reader) (string, error) {
	return writeCacheFileWith(path, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}

// writeCacheFileWith is writeCacheFile of what write writes to the
// temporary file, which it writes to directly (no pipe, no copy); when
// write fails, no file is left.
//
// A save fsyncs neither the file nor the directory: a saved table is
// derived data, checked when it is loaded (CRC, seal, digests), so what a
// crash can leave under the name (an empty, cut-short or torn file) costs
// a rebuild and one warning line, never wrong bytes, while two fsyncs a
// save would slow every command that saves (recfs info DIR).
func writeCacheFileWith(path string, write func(w io.Writer) error) (string, error) {
	d, err := openCacheDir(filepath.Dir(path), true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	dfd := int(d.Fd())
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	tmp := ".tmp-" + hex.EncodeToString(rnd[:]) + ".idx"
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", &os.PathError{Op: "create", Path: filepath.Join(d.Name(), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, filepath.Base(path))
	}
	if werr != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return "", werr
	}
	return filepath.Join(d.Name(), filepath.Base(path)), nil
}
