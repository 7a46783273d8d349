package open

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// CreateOrOpen opens the record file at path for appending, as [Table]
// does. When nothing is at path and format names a record format
// (leveldb, recordio, tfrecord), it first creates an empty file of that
// format there (recordio with an empty trailer when trailer is set); a
// file that another process created meanwhile is opened instead. A format
// that names none, or a file already there with bytes of another format
// than format names, is a [UsageError] (appending to it would add records
// of the file's format, not of the one asked for). An empty file has no
// format yet: the append takes the one it finds under its lock (that of a
// racing creator's first records).
func CreateOrOpen(ctx context.Context, path, format string, trailer bool, o Options) (*index.Table, error) {
	if format == "" {
		return Table(ctx, path, o)
	}
	f, err := codec.ParseFormat(format)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		return openAs(ctx, path, f, o)
	}
	t, err := index.Create(ctx, path, f, trailer, o.Index)
	if errors.Is(err, fs.ErrExist) {
		return openAs(ctx, path, f, o)
	}
	return t, err
}

// openAs opens the existing record file at path as [Table] does, refusing
// it with a [UsageError] when it has bytes of another format than f.
func openAs(ctx context.Context, path string, f codec.Format, o Options) (*index.Table, error) {
	t, err := Table(ctx, path, o)
	if err != nil {
		return nil, err
	}
	if got := t.Format(); got != f && t.Info().FileSize > 0 {
		t.Close()
		return nil, usagef("--create %s: %s exists and is a %s file; append to it without --create, or name a new file", f, path, got)
	}
	return t, nil
}
