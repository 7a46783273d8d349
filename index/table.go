package index

import (
	"context"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// Table is the record table of one source file. See the package doc for its
// concurrency promise.
type Table struct {
	info Info
}

var errTODO = errors.New("index: not built yet")

// Open opens the file at path read-only and returns its table, loaded from
// the cache when a valid saved table exists and built otherwise.
func Open(ctx context.Context, path string, o Options) (*Table, error) { return nil, errTODO }

// Build scans r (size bytes) once and returns its table. It saves nothing.
func Build(ctx context.Context, r io.ReaderAt, size int64, o Options) (*Table, error) {
	return nil, errTODO
}

// Format returns the table's format.
func (t *Table) Format() codec.Format { return t.info.Format }

// Len returns the number of records.
func (t *Table) Len() int64 { return 0 }

// Size returns the payload length of record n. REQUIRES: 0 <= n < Len().
func (t *Table) Size(n int64) int64 { return 0 }

// Offset returns the file offset of the first framing byte of record n (the
// first chunk header for leveldb, the block for recordio).
func (t *Table) Offset(n int64) int64 { return 0 }

// ReadAt reads bytes [off, off+len(p)) of record n's payload with
// io.ReaderAt semantics, verifying the checksums of what it touches.
func (t *Table) ReadAt(n int64, p []byte, off int64) (int, error) { return 0, errTODO }

// HasTrailer reports whether the source has a grailbio trailer.
func (t *Table) HasTrailer() bool { return false }

// TrailerSize returns the trailer's length, or 0 when there is none.
func (t *Table) TrailerSize() int64 { return 0 }

// ReadTrailerAt reads bytes of the trailer with io.ReaderAt semantics.
func (t *Table) ReadTrailerAt(p []byte, off int64) (int, error) { return 0, errTODO }

// Header returns the recordio header entries in file order (nil for leveldb).
func (t *Table) Header() []HeaderEntry { return nil }

// Damage returns the byte ranges the scan skipped, in offset order.
func (t *Table) Damage() []codec.Damage { return nil }

// Info summarises the table.
func (t *Table) Info() Info { return t.info }

// Refresh re-examines the source: if it grew, only the new tail is scanned
// and the new records are added; if it shrank or was replaced, the table is
// rebuilt. It reports whether the record list changed.
func (t *Table) Refresh(ctx context.Context) (changed bool, err error) { return false, errTODO }

// Close releases the source file.
func (t *Table) Close() error { return nil }
