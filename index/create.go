package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// Create makes a new, empty record file of format f at path (failing if it
// exists) and returns its table: an empty file for a leveldb log, a
// header-only file for recordio (with a trailer when trailer is set). The
// table is made from the descriptor that created the file (CreateSource).
// Its format is f, or, when another writer's records reached the file
// before it was set up, the format they made it (found from its bytes:
// Options.Format is not used). Like Append, it refuses a directory whose
// database LOCK is held.
//
// The new file and its entry in the directory are durable when Create
// returns (an fsync of each), unless Options.DeferCreateSync leaves both
// to the table's next synced append or Sync.
func Create(ctx context.Context, path string, f codec.Format, trailer bool, o Options) (*Table, error) {
	if err := guardCreate(path, o); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	src, err := local.New(file, path)
	if err != nil {
		file.Close()
		os.Remove(path)
		return nil, err
	}
	t, err := createIn(ctx, src, path, f, trailer, o, true)
	if err != nil {
		src.Close()
		return nil, err
	}
	return t, nil
}

// CreateSource is Create for a new, empty local file src the caller
// created (read-write): it writes the empty record file of format ff into
// it and returns its table, which takes src over. Like Create, it refuses a
// directory whose database LOCK is held, before writing anything. Other
// sources are refused with ErrWritableSource. On failure src is left open
// and the caller removes the file. The file is synced as by Create; its
// directory entry is the caller's to make durable (an fsync of the
// directory it created the file in).
func CreateSource(ctx context.Context, src source.Source, ff codec.Format, trailer bool, o Options) (*Table, error) {
	l, ok := src.(*local.File)
	if !ok {
		return nil, ErrWritableSource
	}
	key := l.Identity().Key
	if err := guardCreate(key, o); err != nil {
		return nil, err
	}
	return createIn(ctx, l, key, ff, trailer, o, false)
}

// createIn writes the empty record file of format ff into the new file l
// (named name) and returns its table, under the file's append lock:
// appenders that find the new file before its header is written wait for
// the header, and one that opened the empty file meanwhile (guessing its
// format) must not write into it before the table in format ff has seen it
// as it was made. One that wrote before the lock was taken made the file
// its format: go on in that, as its bytes say (o.Format is not used). With
// remove, a file whose header could not be written is removed; without, it
// is truncated back to empty (the caller's empty file stays empty, for a
// later create to set up). With o.KeepCreateLock the table keeps the lock
// for its first append.
func createIn(ctx context.Context, l *local.File, name string, ff codec.Format, trailer bool, o Options, remove bool) (*Table, error) {
	f := l.OSFile()
	unlock, err := lockFile(f)
	if err != nil {
		return nil, err
	}
	kept := false
	defer func() {
		if !kept {
			unlock()
		}
	}()
	synced := false
	// The table is of the file's format: ff when this create writes it,
	// else what the other writer's bytes are (found from them, not
	// taken from a format the caller's options preset for reading).
	o.Format = codec.Unknown
	if !writtenMeanwhile(f) {
		if synced, err = initRecordFile(f, name, ff, trailer, o.DeferCreateSync); err != nil {
			if remove {
				os.Remove(name)
			} else if terr := f.Truncate(0); terr != nil {
				// The file was empty when its lock was taken, and the
				// lock is still held: what is in it now is this write's.
				err = fmt.Errorf("%w (and truncating back to empty: %v)", err, terr)
			}
			return nil, err
		}
		o.Format = ff
	}
	if remove && synced {
		// The file is durable; its entry in the directory must be too.
		if err := syncDir(filepath.Dir(name)); err != nil {
			os.Remove(name)
			return nil, err
		}
	}
	now, err := l.Now()
	if err != nil {
		return nil, err
	}
	t, err := openVersion(ctx, now, name, o, false)
	if err != nil {
		return nil, err
	}
	if remove && !synced {
		dir := filepath.Dir(name)
		t.newEntry.Store(&dir) // for the next synced append or Sync
	}
	if o.KeepCreateLock {
		t.held.Store(&unlock)
		kept = true
	}
	return t, nil
}

// writtenMeanwhile reports whether the new file f, which the caller has
// just locked, is no longer empty.
func writtenMeanwhile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Size() > 0
}

// guardCreate refuses a new record file at path in the directory of a
// running database (see local.ErrDBLocked), unless o.IgnoreDBLock.
func guardCreate(path string, o Options) error {
	if o.IgnoreDBLock {
		return nil
	}
	if err := checkDBLock(path); err != nil {
		return fmt.Errorf("index: create %s: %w", path, err) // a running database's directory
	}
	return nil
}

// initRecordFile writes the empty record file of format ff (with a trailer
// when trailer is set, for recordio) into the new, empty file f at path and
// makes it durable, unless it is still empty and defer is set (see
// Options.DeferCreateSync). It reports whether it synced f.
func initRecordFile(f *os.File, path string, ff codec.Format, trailer, deferSync bool) (bool, error) {
	drv, err := driverFor(ff)
	if err != nil {
		return false, fmt.Errorf("index: create %s: %w", path, err)
	}
	c, ok := drv.(creator)
	if !ok {
		return false, fmt.Errorf("index: create %s: %w", path, readOnlyErr(drv))
	}
	if err := c.create(f, trailer); err != nil {
		return false, err
	}
	if fi, err := f.Stat(); deferSync && err == nil && fi.Size() == 0 {
		return false, nil
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	synced(path)
	return true, nil
}
