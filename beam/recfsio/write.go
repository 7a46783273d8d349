package recfsio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
)

func init() {
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&writeFn{})
	register.Iter1[[]byte]()
}

// WriteTFRecord writes the []byte elements of col as the records of one
// uncompressed TFRecord file at path (a local path), in no particular
// order. The file appears whole, by a rename, when every record is
// written: a retried write replaces it, never appends to it.
func WriteTFRecord(s beam.Scope, path string, col beam.PCollection) {
	write(s.Scope("recfsio.WriteTFRecord"), path, "tfrecord", col)
}

// WriteLeveldbLog writes the []byte elements of col as the records of
// one leveldb log file (the format of leveldb, RocksDB and pebble WALs and
// MANIFESTs) at path, as WriteTFRecord does.
func WriteLeveldbLog(s beam.Scope, path string, col beam.PCollection) {
	write(s.Scope("recfsio.WriteLeveldbLog"), path, "leveldb", col)
}

// write gathers col on one worker, which writes the file.
func write(s beam.Scope, path, format string, col beam.PCollection) {
	all := beam.GroupByKey(s, beam.AddFixedKey(s, col))
	beam.ParDo0(s, &writeFn{Path: path, Format: format}, all)
}

// writeFn writes one file of records.
type writeFn struct {
	Path   string
	Format string
}

// recordWriter is what both formats' writers do.
type recordWriter interface {
	WriteRecord(p []byte) (int64, error)
	Close() error
}

// ProcessElement writes every record to a temporary file beside Path,
// then renames it to Path.
func (fn *writeFn) ProcessElement(ctx context.Context, _ int, recs func(*[]byte) bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(fn.Path), "."+filepath.Base(fn.Path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a failure; gone by the rename otherwise
	var w recordWriter
	switch fn.Format {
	case "tfrecord":
		w = tfrecord.NewWriter(tmp, tfrecord.WriterOptions{})
	case "leveldb":
		w = leveldb.NewWriter(tmp, leveldb.WriterOptions{})
	default:
		tmp.Close()
		return fmt.Errorf("recfsio: no writer for %q", fn.Format)
	}
	var p []byte
	for recs(&p) {
		if _, err := w.WriteRecord(p); err != nil {
			tmp.Close()
			return fmt.Errorf("%s: %w", fn.Path, err)
		}
	}
	err = w.Close()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), fn.Path)
	}
	return err
}
