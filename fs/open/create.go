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
// that names none is a [UsageError].
func CreateOrOpen(ctx context.Context, path, format string, trailer bool, o Options) (*index.Table, error) {
	if _, err := os.Stat(path); !os.IsNotExist(err) || format == "" {
		return Table(ctx, path, o)
	}
	f, err := codec.ParseFormat(format)
	if err != nil {
		return nil, usagef("%v", err)
	}
	t, err := index.Create(ctx, path, f, trailer, o.Index)
	if errors.Is(err, fs.ErrExist) {
		return Table(ctx, path, o)
	}
	return t, err
}
