package leveldb

import (
	"fmt"

	"github.com/recfs/recfs/codec"
)

// Reasons a leveldb log cannot take more records at its end. Records written
// there anyway would be invisible to every reader. Both match
// codec.ErrSealed under errors.Is.
var (
	// ErrClosedLog means the log's writer closed it: the file ends in
	// pebble's end-of-log marker, and readers stop there.
	ErrClosedLog error = &sealedError{"codec: log closed by its writer (end-of-log marker)"}
	// ErrRecycledTail means the log ends before the end of the file: the
	// rest is intact data from an earlier life of a recycled file, which
	// readers take as the end of the log.
	ErrRecycledTail error = &sealedError{"codec: log ends before stale data of a recycled file"}
)

// sealedError is a reason a log takes no more records; it matches
// codec.ErrSealed.
type sealedError struct{ msg string }

func (e *sealedError) Error() string { return e.msg }

// Is reports whether target is codec.ErrSealed.
func (e *sealedError) Is(target error) bool { return target == codec.ErrSealed }

// CheckAppend reports whether records written at the end of a log of size
// bytes, which a scan described as in, would be read back: it returns an
// error matching ErrClosedLog or ErrRecycledTail when they would not.
func (in Info) CheckAppend(size int64) error {
	switch {
	case in.EOFMarker >= 0:
		return fmt.Errorf("%w at offset %d", ErrClosedLog, in.EOFMarker)
	case in.End < size && (in.Recyclable || in.WALSync):
		return fmt.Errorf("%w at offset %d (file size %d)", ErrRecycledTail, in.End, size)
	}
	return nil
}

// AppendOptions returns the writer options that continue the log at
// offset in its own flavour, as its writer would: recyclable or WAL-sync
// chunks carrying the log's number when the scan saw such chunks, legacy
// chunks otherwise. WAL-sync chunks claim a synced offset of 0 (nothing
// known durable), which is always true.
func (in Info) AppendOptions(offset int64) WriterOptions {
	return WriterOptions{
		Offset:     offset,
		Recyclable: in.Recyclable && !in.WALSync,
		WALSync:    in.WALSync,
		LogNum:     in.LogNum,
	}
}
