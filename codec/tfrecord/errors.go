package tfrecord

import "github.com/recfs/recfs/codec"

// Errors are codec's: every error this package returns about file contents
// matches one of codec.ErrFormat, codec.ErrCorrupt, codec.ErrTruncated or
// codec.ErrUnsupported under errors.Is, and damage is a codec.Damage.
// CorruptError values carry Format codec.TFRecord; offsets are in the
// decompressed stream for compressed files.

// Reasons recorded in damage and errors.
const (
	ReasonLengthCRC = "length checksum mismatch"
	ReasonDataCRC   = "data checksum mismatch"
	ReasonTruncated = "truncated record"
	ReasonLength    = "record length does not match"
)

// corrupt returns a *codec.CorruptError of this format.
func corrupt(off int64, reason string, kind error) *codec.CorruptError {
	return &codec.CorruptError{Format: codec.TFRecord, Off: off, Reason: reason, Err: kind}
}
