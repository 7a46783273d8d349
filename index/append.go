package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/recfs/recfs/codec"
)

// ErrReadOnlyFormat is returned when appending to a format recfs only reads
// (grailbio legacy recordio). It matches codec.ErrUnsupported.
var ErrReadOnlyFormat = fmt.Errorf("%w: appending to legacy recordio files", codec.ErrUnsupported)

// AppendOptions configure Table.Append.
type AppendOptions struct {
	// Sync makes the append durable (fsync) before Append returns. recordio
	// appends are always synced: their crash safety depends on it.
	Sync bool
}

// Append writes recs to the end of the source file as new records, through
// the format's own writer, and adds them to the table. It returns the
// number of the first new record. Appends to one table are serialised, and
// an advisory lock (flock) keeps two recfs processes from interleaving.
//
// leveldb logs: records go after the last complete record. A torn tail left
// by a crashed writer (a record cut short at the end of the file) is first
// moved out of the way — its bytes are saved next to the cached tables and
// the file is truncated to the end of the last good record — because
// goleveldb and pebble would otherwise glue it to the next record. A file
// that ends in App Engine block padding stays padded.
//
// recordio: new body blocks go through codec.RecordIOAppender, which keeps
// the trailer and is crash safe. Legacy recordio files are read-only.
func (t *Table) Append(ctx context.Context, recs [][]byte, o AppendOptions) (first int64, err error) {
	if t.file == nil {
		return 0, errNoFile
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Catch up with changes made by others first; a stat tells whether
	// there are any (appendLog re-checks the size under its file lock).
	if t.moved() {
		if _, err := t.refreshLocked(ctx); err != nil {
			return 0, err
		}
	}
	s := t.s()
	first = s.n
	// Reads of existing records go on during the append: it leaves them
	// where they are (see checkSource).
	t.writing.Add(1)
	defer t.writing.Add(-1)
	switch s.format {
	case codec.LevelDB:
		err = t.appendLog(s, recs, o)
	case codec.RecordIO:
		err = t.appendRIO(recs)
	default:
		err = ErrReadOnlyFormat
	}
	if err != nil {
		return 0, fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	if _, err := t.refreshLocked(ctx); err != nil {
		return 0, err
	}
	if got := t.s().n - first; got != int64(len(recs)) {
		return 0, fmt.Errorf("index: append to %s: %d records written, %d found after it", t.path, len(recs), got)
	}
	return first, nil
}

// appendLog appends to a leveldb log.
func (t *Table) appendLog(s *snapshot, recs [][]byte, o AppendOptions) error {
	f, err := os.OpenFile(t.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size != s.size {
		return fmt.Errorf("file changed while appending (%d bytes, table covers %d)", size, s.size)
	}
	if torn := s.tornTail(); torn >= 0 {
		if err := t.saveTorn(f, torn, size); err != nil {
			return err
		}
		if err := f.Truncate(torn); err != nil {
			return err
		}
		size = torn
	}
	padded := s.log.info.Padded && size > 0 && size%blockSize == 0
	w := codec.NewLogWriter(&offsetWriter{f: f, off: size}, codec.LogWriterOptions{Offset: size, AppEngine: padded})
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if o.Sync {
		return f.Sync()
	}
	return nil
}

// repairLogTail moves a torn leveldb tail (a record cut short at the end of
// the file by a crashed writer) out of the way when a table is opened for
// writing: the bytes are saved aside and the file is truncated to the end
// of its last good record, so reference readers read it cleanly again. It
// reports whether it changed the file.
func (t *Table) repairLogTail() (bool, error) {
	s := t.s()
	torn := s.tornTail()
	if s.format != codec.LevelDB || torn < 0 {
		return false, nil
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return false, err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != s.size {
		return false, err // changed meanwhile: leave it to the next append
	}
	if err := t.saveTorn(f, torn, s.size); err != nil {
		return false, err
	}
	return true, f.Truncate(torn)
}

// tornTail returns where a damaged tail of a leveldb log starts (the end of
// the last good record), or -1 if the file ends cleanly.
func (s *snapshot) tornTail() int64 {
	for _, d := range s.damage {
		if d.Off >= s.log.resume {
			return s.log.resume
		}
	}
	return -1
}

// saveTorn copies the bytes [from, to) of f aside before they are cut off,
// so that nothing a crashed writer left is destroyed without a trace.
func (t *Table) saveTorn(f *os.File, from, to int64) error {
	dir := t.opt.CacheDir
	if dir == "-" {
		dir = ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "recfs")
	}
	dir = filepath.Join(dir, "torn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf := make([]byte, to-from)
	src, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := src.ReadAt(buf, from); err != nil {
		return err
	}
	name := filepath.Join(dir, fmt.Sprintf("%s.%d-%d", filepath.Base(t.path), from, to))
	return os.WriteFile(name, buf, 0o644)
}

// appendRIO appends items to a recordio v2 file. The file is flock'd for
// the whole append, like a leveldb append, so two recfs processes never
// interleave their blocks or journals.
func (t *Table) appendRIO(items [][]byte) error {
	lock, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	a, err := codec.OpenRecordIOAppender(t.path, codec.RecordIOAppendOptions{})
	if err != nil {
		return err
	}
	if err := a.Append(items...); err != nil {
		a.Close()
		return err
	}
	return a.Close()
}

// offsetWriter writes sequentially at an explicit offset, so appends land
// where the table says the log ends even if the descriptor's offset differs.
type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

// Create makes a new, empty record file of format f at path (failing if it
// exists) and returns its table: an empty file for a leveldb log, a
// header-only file for recordio (with a trailer when trailer is set).
func Create(ctx context.Context, path string, f codec.Format, trailer bool, o Options) (*Table, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	switch f {
	case codec.LevelDB:
	case codec.RecordIO:
		w, err := codec.NewRecordIOWriter(file, codec.RecordIOWriterOptions{Trailer: trailer})
		if err == nil && trailer {
			err = w.SetTrailer(nil)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			file.Close()
			os.Remove(path)
			return nil, err
		}
	default:
		file.Close()
		os.Remove(path)
		return nil, fmt.Errorf("index: create %s: %w", path, ErrReadOnlyFormat)
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return nil, err
	}
	file.Close()
	o.Format = f
	return Open(ctx, path, o)
}

var _ = errors.Is
