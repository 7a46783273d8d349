package index

import (
	"context"
	"io"
	"math"

	"github.com/recfs/recfs/codec"
)

// The format seam. Everything the index does with a record file that
// depends on its format goes through a driver (how to recognise, build and
// load a table of that format) and the table it builds (where record k is
// and how to read it). Generic code — Open, the cache, Refresh, the source
// checks — never asks which format it holds. The drivers are listed in
// formats.go.

// driver knows one record-file format.
type driver interface {
	// probe reports whether the file, whose first bytes are head (up to
	// 20), is of the driver's format. An error ends detection: the bytes
	// are recognisably wrong (codec.ErrFormat).
	probe(r io.ReaderAt, size int64, head []byte) (bool, error)
	// build scans r (size bytes) once and returns its snapshot, whose
	// tab is the driver's table.
	build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error)
	// decode reads a table of n records that table.encode wrote; errors
	// are left in d.
	decode(d *decoder, f codec.Format, n int64) table
}

// table is the record table one driver built for one version of a source.
// A snapshot holds it; it never changes once published.
type table interface {
	// size returns the payload length of record k (0 <= k < n).
	size(k int64) int64
	// offset returns the file offset of the first framing byte of record k.
	offset(k int64) int64
	// readAt reads bytes [off, off+len(p)) of record k's payload from the
	// source of s, verifying what it touches; tb holds per-source state
	// (the source, a decoded-block reader).
	readAt(tb *Table, s *snapshot, k int64, p []byte, off int64) (int, error)
	// samePrefix reports whether the first n records of old have the same
	// locations in this table.
	samePrefix(old table, n int64) bool
	// encode writes the table for the cache file.
	encode(e *encoder)
	// check verifies a decoded table against s (its size and counts).
	check(s *snapshot) error
}

// Optional capabilities, discovered by type assertion.
type (
	// stopper is a table whose reads can run long (decompressing a
	// stream from a checkpoint) and stop when ctx is done, failing with
	// an error matching context.Canceled.
	stopper interface {
		readAtStopping(ctx context.Context, tb *Table, s *snapshot, k int64, p []byte, off int64) (int, error)
	}
	// probeLater is a driver that can also recognise its files by a weaker
	// sign, tried only after every driver's probe failed.
	probeLater interface {
		probeLate(r io.ReaderAt, size int64) bool
	}
	// prober is a driver that says, for Detect's error, what its probe
	// looked for in a file that starts with head.
	prober interface {
		tried(head []byte) string
	}
	// repairer is a driver whose files a crashed append of ours can leave
	// half-done; repair puts f back whole, under the append lock.
	repairer interface {
		repair(f appendDest, path string, p tailPolicy) (bool, error)
	}
	// appender is a driver of a format recfs appends to: it writes recs
	// (or streams) at the end of f, which s describes and whose lock the
	// caller holds, and returns what puts the file back.
	appender interface {
		append(t *Table, f appendDest, s *snapshot, a appendReq) (undo, error)
	}
	// creator is a driver of a format recfs creates files of: create
	// writes an empty record file (with a trailer when trailer is set and
	// the format has them) to w.
	creator interface {
		create(w io.Writer, trailer bool) error
	}
	// extender is a table that can take in what was appended to its
	// source by scanning only the new tail (extend, reading the grown
	// version through src) when canExtend.
	extender interface {
		canExtend() bool
		extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error)
	}
	// readOnly is a driver of a format recfs reads but never writes:
	// readOnly says why, for the error that refuses an append.
	readOnly interface {
		readOnly() string
	}
	// appendChecker is a table that can tell before writing that an
	// append would be refused (for example a log its writer closed).
	appendChecker interface {
		checkAppend(size int64) error
	}
)

// lenInSide marks a record whose length lives in a table's side map.
const lenInSide = math.MaxUint32
