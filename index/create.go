package index

import (
	"context"
	"fmt"
	"os"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source/local"
)

// Create makes a new, empty record file of format f at path (failing if it
// exists) and returns its table: an empty file for a leveldb log, a
// header-only file for recordio (with a trailer when trailer is set). The
// table is made from the descriptor that created the file. Like Append, it
// refuses a directory whose database LOCK is held.
func Create(ctx context.Context, path string, f codec.Format, trailer bool, o Options) (*Table, error) {
	if err := guardCreate(path, o); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	// Appenders that find the new file before its header is written wait
	// for the header.
	unlock, err := lockFile(file)
	if err != nil {
		file.Close()
		return nil, err
	}
	// The table is made under the lock too: an appender that opened the
	// empty file meanwhile (guessing its format) must not write into it
	// before the table in format f has seen it as it was made. One that
	// wrote before the lock was taken made the file its format: go on in
	// that.
	if !writtenMeanwhile(file) {
		if err := initRecordFile(file, path, f, trailer); err != nil {
			unlock()
			file.Close()
			os.Remove(path)
			return nil, err
		}
		o.Format = f
	}
	t, err := openFile(ctx, file, path, o)
	unlock()
	if err != nil {
		file.Close()
		return nil, err
	}
	return t, nil
}

// CreateFile is Create for a new, empty file f the caller created
// (read-write) at path: it writes the empty record file of format ff into
// it and returns its table, which keeps f. Like Create, it refuses a
// directory whose database LOCK is held, before writing anything. On
// failure f is left open and the caller removes the file.
func CreateFile(ctx context.Context, f *os.File, path string, ff codec.Format, trailer bool, o Options) (*Table, error) {
	if err := guardCreate(path, o); err != nil {
		return nil, err
	}
	// Under the file's lock, as Create: appenders that found the new file
	// wait until its table is made.
	unlock, err := lockFile(f)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if writtenMeanwhile(f) {
		return OpenFile(ctx, f, path, o) // as Create
	}
	if err := initRecordFile(f, path, ff, trailer); err != nil {
		return nil, err
	}
	o.Format = ff
	return OpenFile(ctx, f, path, o)
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
	if err := local.CheckDBLock(path); err != nil {
		return fmt.Errorf("index: create %s: %w", path, err) // a running database's directory
	}
	return nil
}

// initRecordFile writes the empty record file of format ff (with a trailer
// when trailer is set, for recordio) into the new, empty file f at path and
// makes it durable.
func initRecordFile(f *os.File, path string, ff codec.Format, trailer bool) error {
	drv, err := driverFor(ff)
	if err != nil {
		return fmt.Errorf("index: create %s: %w", path, err)
	}
	c, ok := drv.(creator)
	if !ok {
		return fmt.Errorf("index: create %s: %w", path, readOnlyErr(drv))
	}
	if err := c.create(f, trailer); err != nil {
		return err
	}
	return f.Sync()
}
