package tfrecord

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns about file contents
// matches exactly one of them under [errors.Is].
var (
	// ErrFormat means the bytes are not a TFRecord file.
	ErrFormat = errors.New("tfrecord: not a TFRecord file")
	// ErrCorrupt means a length or data checksum failed.
	ErrCorrupt = errors.New("tfrecord: corrupt data")
	// ErrTruncated means the file ends inside a record.
	ErrTruncated = errors.New("tfrecord: truncated")
	// ErrUnsupported means the operation is not possible on this file, such
	// as appending to a compressed one.
	ErrUnsupported = errors.New("tfrecord: unsupported")
)

// Reasons recorded in damage and errors.
const (
	ReasonLengthCRC = "length checksum mismatch"
	ReasonDataCRC   = "data checksum mismatch"
	ReasonTruncated = "truncated record"
	ReasonLength    = "record length does not match"
)

// CorruptError says where and why the bytes of a file could not be trusted.
// Unwrap returns one of the package's sentinel errors.
type CorruptError struct {
	Off    int64  // offset of the damage (in the decompressed stream for compressed files)
	Reason string // what was wrong, in a few words
	Err    error  // ErrCorrupt or ErrTruncated
}

// Error says what was wrong at which offset.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("tfrecord: %s at offset %d", e.Reason, e.Off)
}

// Unwrap returns the sentinel error that classifies e.
func (e *CorruptError) Unwrap() error { return e.Err }

// A Damage is a byte range a scan skipped, and why. Records with bytes
// inside a damaged range are not returned.
type Damage struct {
	Off    int64  // offset of the first skipped byte
	Len    int64  // number of bytes skipped
	Reason string // one of the Reason constants
	Err    error  // ErrCorrupt or ErrTruncated
}

// Error describes the damage; a Damage can be returned as an error.
func (d Damage) Error() string {
	return fmt.Sprintf("%s: %d bytes at offset %d", d.Reason, d.Len, d.Off)
}

// Unwrap returns the sentinel error that classifies d.
func (d Damage) Unwrap() error { return d.Err }

// AsError turns d into a *CorruptError, for strict scans.
func (d Damage) AsError() *CorruptError {
	return &CorruptError{Off: d.Off, Reason: d.Reason, Err: d.Err}
}

// IsFormatError reports whether err says the bytes are not TFRecord.
func IsFormatError(err error) bool { return errors.Is(err, ErrFormat) }
