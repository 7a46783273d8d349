package open

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/local"
)

// CreateOrOpen opens the record file at path for appending, as [Table]
// does. When nothing is at path and format names a record format
// (leveldb, recordio, tfrecord), it first creates an empty file of that
// format there (recordio with an empty trailer when trailer is set); a
// file that another process created meanwhile is opened instead. An empty
// regular file already there (touch FILE) has no format yet: the empty
// file of the format is written into it, as into a new one. A format that
// names none, or a file already there with bytes of another format than
// format names, is a [UsageError] (appending to it would add records of
// the file's format, not of the one asked for). A file another writer
// puts records into before the empty file of the format is written (or,
// when that writes nothing, before the append) keeps their format: the
// append takes the one it finds under the file's lock.
func CreateOrOpen(ctx context.Context, path, format string, trailer bool, o Options) (*index.Table, error) {
	if format == "" {
		return Table(ctx, path, o)
	}
	f, err := codec.ParseFormat(format)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		return openExisting(ctx, path, f, trailer, o)
	}
	t, err := index.Create(ctx, path, f, trailer, o.Index)
	if errors.Is(err, fs.ErrExist) {
		// Another process created it since: empty, it has no format yet.
		return openExisting(ctx, path, f, trailer, o)
	}
	if err != nil {
		return nil, err
	}
	// Another's bytes may have reached the new file before its lock was
	// taken (one that found it empty), making it their format.
	return checkFormat(t, path, f)
}

// openExisting opens the file already at path for appending records of
// format f: an empty regular file gets the empty record file of f written
// into it (createInEmpty); any other is opened and refused as openAs does
// if its bytes are of another format.
func openExisting(ctx context.Context, path string, f codec.Format, trailer bool, o Options) (*index.Table, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return createInEmpty(ctx, path, f, trailer, o)
	}
	return openAs(ctx, path, f, o)
}

// createInEmpty writes the empty record file of format f into the empty
// regular file at path (index.CreateSource) and returns its table, refusing
// it as openAs does if records of another format reached it first.
func createInEmpty(ctx context.Context, path string, f codec.Format, trailer bool, o Options) (*index.Table, error) {
	file, err := local.OpenPath(path, o.Index.Writable, false)
	if err != nil {
		return nil, err
	}
	src, err := local.New(file, path)
	if err != nil {
		file.Close()
		return nil, err
	}
	t, err := index.CreateSource(ctx, src, f, trailer, o.Index)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return checkFormat(t, path, f)
}

// openAs opens the existing record file at path as [Table] does, refusing
// it with a [UsageError] when it has bytes of another format than f.
func openAs(ctx context.Context, path string, f codec.Format, o Options) (*index.Table, error) {
	t, err := Table(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return checkFormat(t, path, f)
}

// checkFormat returns t, or closes it and returns a [UsageError] when the
// file at path has bytes of another format than f.
func checkFormat(t *index.Table, path string, f codec.Format) (*index.Table, error) {
	if got := t.Format(); got != f && t.Info().FileSize > 0 {
		t.Close()
		return nil, usagef("--create %s: %s exists and is a %s file; append to it without --create, or name a new file", f, path, got)
	}
	return t, nil
}
