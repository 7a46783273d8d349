package kafka

import "github.com/recfs/recfs/codec"

// Errors are codec's: every error this package returns about file contents
// matches one of codec.ErrFormat, codec.ErrCorrupt, codec.ErrTruncated,
// codec.ErrUnsupported or codec.ErrLimit under errors.Is, and damage is a
// codec.Damage. CorruptError values carry Format codec.Kafka.

// Reasons recorded in damage and errors.
const (
	ReasonCRC         = "batch checksum mismatch"
	ReasonInnerCRC    = "inner message checksum mismatch"
	ReasonMagic       = "unknown magic byte"
	ReasonLength      = "impossible batch length"
	ReasonAttributes  = "unknown attributes"
	ReasonOffset      = "impossible offset"
	ReasonHeader      = "impossible header field"
	ReasonCount       = "record count does not match the batch"
	ReasonRecords     = "records do not parse"
	ReasonDecompress  = "records do not decompress"
	ReasonTooLarge    = "decompressed records exceed the limit"
	ReasonTruncated   = "truncated batch"
	ReasonTruncHeader = "truncated batch header"
	ReasonNested      = "compressed message inside a compressed message"
	ReasonZeroTail    = "zeroed tail"
)

// corrupt returns a *codec.CorruptError of this format.
func corrupt(off int64, reason string, kind error) *codec.CorruptError {
	return &codec.CorruptError{Format: codec.Kafka, Off: off, Reason: reason, Err: kind}
}

// damageKind classifies damage of the given reason for codec.Damage.Kind.
func damageKind(reason string) codec.DamageKind {
	switch reason {
	case ReasonCRC, ReasonInnerCRC:
		return codec.DamageChecksum
	case ReasonLength:
		return codec.DamageLength
	case ReasonMagic:
		return codec.DamageType
	case ReasonTruncated:
		return codec.DamageTruncChunk
	case ReasonTruncHeader, ReasonZeroTail:
		return codec.DamageTruncHdr
	}
	return codec.DamageOther
}

// errKind returns the sentinel error of damage of the given reason.
func errKind(reason string) error {
	switch reason {
	case ReasonTruncated, ReasonTruncHeader, ReasonZeroTail:
		return codec.ErrTruncated
	case ReasonTooLarge:
		return codec.ErrLimit
	}
	return codec.ErrCorrupt
}
