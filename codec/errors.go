package codec

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns about file contents
// matches exactly one of them under [errors.Is].
var (
	// ErrFormat means the bytes are not a record file of the expected format.
	ErrFormat = errors.New("codec: not a record file")
	// ErrCorrupt means a checksum, length, type or structural invariant failed.
	ErrCorrupt = errors.New("codec: corrupt data")
	// ErrTruncated means the file ends inside a record.
	ErrTruncated = errors.New("codec: truncated")
	// ErrUnsupported means a valid file uses a feature recfs does not implement,
	// such as an unknown recordio transformer.
	ErrUnsupported = errors.New("codec: unsupported")
	// ErrLimit means a size limit was hit, for example a compressed block that
	// would expand past the decoded-block cap.
	ErrLimit = errors.New("codec: size limit exceeded")
	// ErrStale marks the bytes after the end of a recycled log (RocksDB,
	// pebble): what is left of the file's previous life. It is the end of
	// the log, not damage; it is only ever the Err of a Damage.
	ErrStale = errors.New("codec: stale data of a recycled log")
	// ErrShortInput means a stream given to a writer ended before the size
	// it announced.
	ErrShortInput = errors.New("codec: input ended before its announced size")
	// ErrSealed means a file takes no more records at its end: readers would
	// not see them (a closed or recycled leveldb log). The format's own
	// sentinels say why and match it too.
	ErrSealed = errors.New("codec: file takes no more records at its end")
)

// CorruptError says where and why the bytes of a file could not be trusted.
// Unwrap returns one of the package's sentinel errors.
type CorruptError struct {
	Format Format // the format being read
	Off    int64  // file offset of the damage
	Reason string // what was wrong, in a few words
	Err    error  // ErrCorrupt, ErrTruncated, ErrUnsupported or ErrLimit
}

// Error says what was wrong, in which format, at which file offset.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("codec: %s: %s at offset %d", e.Format, e.Reason, e.Off)
}

// Unwrap returns the sentinel error that classifies e.
func (e *CorruptError) Unwrap() error { return e.Err }

// A Damage is a byte range of the file that a scan skipped, and why.
// Records that had bytes inside a damaged range are not returned.
type Damage struct {
	Off    int64      // file offset of the first skipped byte
	Len    int64      // number of bytes skipped
	Kind   DamageKind // what was wrong, for code to compare (DamageOther when the format does not classify it)
	Reason string     // what was wrong, for people: e.g. "checksum mismatch", "orphan chunk", "truncated record"
	Err    error      // ErrCorrupt, ErrTruncated, ErrUnsupported, ErrLimit or ErrStale
}

// DamageKind classifies a Damage by what was wrong, so that scanners join
// and settle damage by comparing kinds, never reason strings. Its String is
// the reason a scan gives for damage of that kind.
type DamageKind uint8

// The kinds of damage. Formats that do not classify their damage use
// DamageOther and say what was wrong in Reason.
const (
	DamageOther      DamageKind = iota // not classified; see Reason
	DamageChecksum                     // a chunk's checksum did not match
	DamageLength                       // a chunk's length field was impossible
	DamageType                         // a chunk of an unknown type
	DamageZeroHeader                   // a zeroed chunk header before data
	DamageOrphan                       // a chunk that continues no record
	DamageCutShort                     // a record whose later chunks are missing
	DamageTruncChunk                   // the file ends inside a chunk
	DamageTruncHdr                     // the file ends inside a chunk header
	DamageFragmented                   // a record of too many chunks
	DamageStale                        // the stale tail of a recycled log
)

var damageWords = [...]string{
	DamageOther:      "damage",
	DamageChecksum:   "checksum mismatch",
	DamageLength:     "bad chunk length",
	DamageType:       "unknown chunk type",
	DamageZeroHeader: "zero header before data",
	DamageOrphan:     "orphan chunk",
	DamageCutShort:   "record cut short",
	DamageTruncChunk: "truncated chunk",
	DamageTruncHdr:   "truncated header",
	DamageFragmented: "record too fragmented",
	DamageStale:      "stale data of a recycled log",
}

// String returns the words a scan gives as the Reason of damage of kind k.
func (k DamageKind) String() string {
	if int(k) < len(damageWords) {
		return damageWords[k]
	}
	return fmt.Sprintf("damage kind %d", uint8(k))
}

// Stale reports whether d is the stale tail of a recycled log (ErrStale):
// the end of the log rather than damage.
func (d Damage) Stale() bool { return errors.Is(d.Err, ErrStale) }

// Error describes the damage; a Damage can be returned as an error.
func (d Damage) Error() string {
	return fmt.Sprintf("%s: %d bytes at offset %d", d.Reason, d.Len, d.Off)
}

// Unwrap returns the sentinel error that classifies d.
func (d Damage) Unwrap() error { return d.Err }

// AsError turns d into a *CorruptError of format f, for strict scans.
func (d Damage) AsError(f Format) *CorruptError {
	return &CorruptError{Format: f, Off: d.Off, Reason: d.Reason, Err: d.Err}
}
