package index

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNoPrivateDir is returned when a torn leveldb tail would have to be
// cut off but there is no private directory to save its bytes in first:
// neither Options.CacheDir nor $XDG_CACHE_HOME or $HOME names one, or the
// directory found is not owned by the running user or is writable by
// others. recfs then leaves the file alone rather than save the bytes in a
// shared place such as /tmp, where another user could plant a symlink.
var ErrNoPrivateDir = errors.New("index: no private directory to save a torn tail in")

// maxTornBackups bounds the names tried for one torn range (name, name.1, …).
const maxTornBackups = 100

// repairLogTail moves a torn leveldb tail (a record cut short at the end of
// the file by a crashed writer) out of the way when a table is opened for
// writing: the bytes are saved aside and the file is truncated to the end
// of its last good record, so reference readers read it cleanly again. It
// holds the file's append lock while it works and reports whether it
// changed the file.
func (t *Table) repairLogTail() (bool, error) {
	s := t.s()
	torn := s.tornTail()
	if torn < 0 {
		return false, nil
	}
	if !readWrite(t.file) {
		// Not ours to write through here: the next append repairs the
		// file, under its lock, through a writable descriptor.
		return false, nil
	}
	if t.guardDBLock() != nil {
		// A running database's log: what looks torn may be a record it is
		// writing right now. Leave it; an append would be refused anyway.
		return false, nil
	}
	unlock, err := lockFile(t.file)
	if err != nil {
		return false, err
	}
	defer unlock()
	fi, err := t.file.Stat()
	if err != nil || fi.Size() != s.size {
		return false, err // changed meanwhile: leave it to the next append
	}
	if _, err := t.saveTorn(t.file, torn, s.size); err != nil {
		return false, err
	}
	if err := t.file.Truncate(torn); err != nil {
		return false, err
	}
	return true, t.file.Sync()
}

// goodEnder is a table of a format whose torn tails are repaired (leveldb
// logs, TFRecord files): it knows where its last intact record ends, in
// file offsets (ok false when it cannot say, as for a compressed file).
type goodEnder interface{ goodEnd() (end int64, ok bool) }

func (t *logTable) goodEnd() (int64, bool) { return t.resume, true }

// tornTail returns where a damaged tail of a leveldb log or TFRecord file
// starts (the end of the last good record), or -1 if the file ends cleanly.
func (s *snapshot) tornTail() int64 {
	ge, ok := s.tab.(goodEnder)
	if !ok {
		return -1
	}
	resume, ok := ge.goodEnd()
	if !ok {
		return -1
	}
	for _, d := range s.damage {
		if d.Off >= resume {
			return resume
		}
	}
	return -1
}

// saveTorn copies the bytes [from, to) of f into a new file of the private
// torn-tail directory before they are cut off, so that nothing a crashed
// writer left is destroyed without a trace. The backup is created 0600,
// never through a symlink and never over an existing file. It returns the
// backup's path.
func (t *Table) saveTorn(f *os.File, from, to int64) (string, error) {
	dir, err := tornDir(t.opt.CacheDir)
	if err != nil {
		return "", err
	}
	d, err := openPrivateDir(dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	base := fmt.Sprintf("%s.%d-%d", filepath.Base(t.path), from, to)
	for i := 0; i < maxTornBackups; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s.%d", base, i)
		}
		fd, err := syscall.Openat(int(d.Fd()), name,
			syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == syscall.EEXIST {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("index: save torn tail in %s: %w", dir, err)
		}
		out := os.NewFile(uintptr(fd), filepath.Join(dir, name))
		_, err = io.Copy(out, io.NewSectionReader(f, from, to-from))
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = d.Sync()
		}
		if err != nil {
			return "", fmt.Errorf("index: save torn tail: %w", err)
		}
		return out.Name(), nil
	}
	return "", fmt.Errorf("index: save torn tail: %d backups of %s exist already in %s", maxTornBackups, base, dir)
}

// tornDir returns the directory torn tails are saved in: "torn" under the
// cache directory (the user's cache directory when cacheDir is "" or "-").
func tornDir(cacheDir string) (string, error) {
	if cacheDir == "" || cacheDir == "-" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoPrivateDir, err)
		}
		cacheDir = filepath.Join(base, "recfs")
	}
	return filepath.Join(cacheDir, "torn"), nil
}

// openPrivateDir makes dir (0700) if needed and opens it, refusing a
// symlink and a directory that is not the running user's or that others
// may write in.
func openPrivateDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPrivateDir, err)
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPrivateDir, err)
	}
	if ok, err := privateDir(int(d.Fd()), 0o022); err != nil {
		d.Close()
		return nil, err
	} else if !ok {
		d.Close()
		return nil, fmt.Errorf("%w: %s is not ours or others may write to it", ErrNoPrivateDir, dir)
	}
	return d, nil
}
