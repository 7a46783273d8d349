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

// damageKind classifies damage of the given reason for codec.Damage.Kind;
// atEOF says the damage runs to the end of the file.
func damageKind(reason string, atEOF bool) codec.DamageKind {
	switch reason {
	case ReasonLengthCRC, ReasonDataCRC:
		return codec.DamageChecksum
	case ReasonTruncated:
		if atEOF {
			return codec.DamageTruncChunk
		}
		return codec.DamageLength
	}
	return codec.DamageOther
}
