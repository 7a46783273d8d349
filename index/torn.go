package index

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
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

// Tails. An append goes right after the file's last record, so whatever
// follows that record must go first. Only what a writer that stopped in the
// middle of a record leaves is cut without being asked: for leveldb logs and
// TFRecord files, bytes the scan reads as a record running past the end of
// the file (codec.ErrTruncated: a frame whose length and checksums hold as
// far as the file goes); for recordio, the first chunks of a block
// (recordio.TornTail), or what an interrupted append's journal says it
// wrote. Such a tail is saved in the private torn-tail directory, cut off
// and reported (Options.TailMoved). Anything else refuses the append with a
// *TailError and leaves the file alone, unless Options.MoveDamagedTail says
// to move it aside the same way.

// ErrDamagedTail is matched by a *TailError.
var ErrDamagedTail = errors.New("index: the file ends in bytes that are not a torn record")

// TailError says that a file ends, after its last record, in bytes that are
// not a torn record (what a writer leaves when it stops in the middle of
// one), so an append did not cut them and wrote nothing. It matches
// ErrDamagedTail and codec.ErrCorrupt.
type TailError struct {
	Path   string
	Off    int64  // the first byte after the last record
	Len    int64  // bytes from Off to the end of the file
	Reason string // what is there instead, and where
}

func (e *TailError) Error() string {
	return fmt.Sprintf("index: %s: the %d bytes at offset %d after the last record are not a torn record (%s); "+
		"nothing was written (`recfs verify` shows the damage; appending with --force moves the bytes aside)",
		e.Path, e.Len, e.Off, e.Reason)
}

// Unwrap returns ErrDamagedTail and codec.ErrCorrupt.
func (e *TailError) Unwrap() []error { return []error{ErrDamagedTail, codec.ErrCorrupt} }

// MovedTail is what an append (or a Writable open) took off the end of a
// file before going on.
type MovedTail struct {
	Path    string
	Off     int64  // where the bytes started; the file now ends there (or, for a rolled-back recordio append, at the trailer written back there)
	Len     int64  // how many bytes were cut
	SavedTo string // the file holding them, "" when a recordio journal proved them an interrupted append of ours
	Reason  string // why they could go
}

// Reasons of MovedTail.
const (
	MovedTorn     = "a torn record"
	MovedForced   = "not a torn record; moved as forced"
	MovedRollback = "an interrupted append, rolled back as its journal says"
)

// tailPolicy is what repairs and appends may do with a file's tail.
type tailPolicy struct {
	cacheDir string          // the cache directory, whose "torn" directory keeps saved tails
	force    bool            // Options.MoveDamagedTail
	told     func(MovedTail) // Options.TailMoved
}

func (o Options) tails() tailPolicy {
	return tailPolicy{cacheDir: o.CacheDir, force: o.MoveDamagedTail, told: o.TailMoved}
}

// tell reports a moved tail to the caller, or logs it.
func (p tailPolicy) tell(m MovedTail) {
	if p.told != nil {
		p.told(m)
		return
	}
	logrus.WithFields(logrus.Fields{"file": m.Path, "offset": m.Off, "bytes": m.Len, "saved_to": m.SavedTo}).
		Warnf("index: moved %d bytes at the end of %s out of the file (%s)", m.Len, m.Path, m.Reason)
}

// move saves [from, to) of r, the file at path, aside and describes the
// move (torn or forced); the caller cuts the file and tells.
func (p tailPolicy) move(r io.ReaderAt, path string, from, to int64, torn bool) (MovedTail, error) {
	saved, err := saveTail(r, path, p.cacheDir, from, to)
	if err != nil {
		return MovedTail{}, err
	}
	m := MovedTail{Path: path, Off: from, Len: to - from, SavedTo: saved, Reason: MovedTorn}
	if !torn {
		m.Reason = MovedForced
	}
	return m, nil
}

// cuttable is what cut needs of a file: an appendDest or an appendFile.
type cuttable interface {
	io.ReaderAt
	Truncate(size int64) error
	Sync() error
}

// cut repairs a tail for good: it saves [from, to) of f, the file at path,
// aside (move), truncates f at from, syncs it and tells. The caller holds
// f's append lock.
func (p tailPolicy) cut(f cuttable, path string, from, to int64, torn bool) error {
	m, err := p.move(f, path, from, to, torn)
	if err != nil {
		return err
	}
	if err := f.Truncate(from); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	p.tell(m)
	return nil
}

// goodEnder is a table of a format whose torn tails are repaired (leveldb
// logs, TFRecord files): it knows where its last intact record ends, in
// file offsets (ok false when it cannot say, as for a compressed file).
type goodEnder interface{ goodEnd() (end int64, ok bool) }

func (t *logTable) goodEnd() (int64, bool) { return t.resume, true }

// tail returns where the bytes after the last record of a leveldb log or
// TFRecord file start, if the scan found damage there (-1 if the file ends
// cleanly), whether they are a torn record (all of that damage is
// codec.ErrTruncated) and, when not, what the first other damage is.
func (s *snapshot) tail() (off int64, torn bool, reason string) {
	ge, ok := s.tab.(goodEnder)
	if !ok {
		return -1, false, ""
	}
	resume, ok := ge.goodEnd()
	if !ok {
		return -1, false, ""
	}
	off, torn = -1, true
	for _, d := range s.damage {
		if d.Off+d.Len <= resume {
			continue
		}
		off = resume
		if torn && !errors.Is(d.Err, codec.ErrTruncated) {
			torn, reason = false, fmt.Sprintf("%s at offset %d", d.Reason, d.Off)
		}
	}
	return off, torn, reason
}

// clearTail makes room for an append after the last record of a leveldb
// log or plain TFRecord file f, which s describes and whose lock the caller
// holds: a torn tail (or, when forced, any tail) is saved aside and cut off;
// other bytes after the last record refuse the append (*TailError). It
// returns where the new records go and what puts the file back, which also
// carries the move to report once the append succeeded.
func (t *Table) clearTail(f appendDest, s *snapshot) (int64, undo, error) {
	off, torn, reason := s.tail()
	if off < 0 {
		return s.size, undo{size: s.size, off: s.size, tail: []byte{}}, nil
	}
	p := t.opt.tails()
	if !torn && !p.force {
		return 0, undo{}, &TailError{Path: t.path, Off: off, Len: s.size - off, Reason: reason}
	}
	m, err := p.move(f, t.path, off, s.size, torn)
	if err != nil {
		return 0, undo{}, err
	}
	u := undo{size: s.size, off: off, backup: m.SavedTo, moved: &m}
	if err := f.Truncate(off); err != nil {
		return 0, u, err
	}
	return off, u, nil
}

// repairLogTail moves a torn tail of a leveldb log or TFRecord file (a
// record cut short at the end of the file by a crashed writer) out of the
// way when a table is opened for writing: the bytes are saved aside and the
// file is truncated to the end of its last good record, so reference
// readers read it cleanly again. A tail that is not a torn record stays
// (unless Options.MoveDamagedTail): appends will refuse it. It holds the
// file's append lock while it works and reports whether it changed the
// file.
func (t *Table) repairLogTail() (bool, error) {
	s := t.s()
	off, torn, _ := s.tail()
	p := t.opt.tails()
	if off < 0 || !torn && !p.force || s.proof != nil {
		// Nothing to cut, or a saved table's claim of a tail: the next
		// append scans the file and repairs it.
		return false, nil
	}
	d := t.localFile() // the table's descriptor: not closed here
	if d == nil || !d.Writable() {
		// Not ours to write through here: the next append repairs the
		// file, under its lock, through a writable descriptor.
		return false, nil
	}
	if t.guardDBLock() != nil {
		// A running database's log: what looks torn may be a record it is
		// writing right now. Leave it; an append would be refused anyway.
		return false, nil
	}
	unlock, err := lockDest(d)
	if err != nil {
		return false, err
	}
	defer unlock()
	st, err := d.Fstat()
	if err != nil || st.Size != s.size {
		return false, err // changed meanwhile: leave it to the next append
	}
	if err := p.cut(d, t.path, off, s.size, torn); err != nil {
		return false, err
	}
	return true, nil
}

// saveTail copies the bytes [from, to) of r, the file at path, into a new
// file of the private torn-tail directory under cacheDir before they are
// cut off, so that nothing is destroyed without a trace. The backup is
// created 0600, never through a symlink and never over an existing file.
// It returns the backup's path.
func saveTail(r io.ReaderAt, path, cacheDir string, from, to int64) (string, error) {
	dir, err := tornDir(cacheDir)
	if err != nil {
		return "", err
	}
	d, err := openPrivateDir(dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	base := fmt.Sprintf("%s.%d-%d", filepath.Base(path), from, to)
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
		_, err = io.Copy(out, io.NewSectionReader(r, from, to-from))
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
