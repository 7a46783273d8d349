package fs

import (
	"context"
	"io"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// Records is what the tree needs from a record table. *index.Table
// implements it; tests use small fakes.
type Records interface {
	// Len returns the number of records.
	Len() int64
	// Size returns the payload length of record n, 0 <= n < Len().
	Size(n int64) int64
	// Offset returns the file offset of record n's first framing byte.
	Offset(n int64) int64
	// ReadAt reads bytes of record n's payload with io.ReaderAt semantics.
	ReadAt(n int64, p []byte, off int64) (int, error)
	// HasTrailer reports whether the source has a grailbio trailer.
	HasTrailer() bool
	// TrailerSize returns the trailer's length in bytes.
	TrailerSize() int64
	// ReadTrailerAt reads bytes of the trailer with io.ReaderAt semantics.
	ReadTrailerAt(p []byte, off int64) (int, error)
	// Header returns the recordio header entries in file order.
	Header() []index.HeaderEntry
	// Damage returns the byte ranges the scan skipped.
	Damage() []codec.Damage
	// Info summarises the source for .recfs.
	Info() index.Info
	// Close releases the source file.
	Close() error
}

var _ Records = (*index.Table)(nil)

// Versioned is Records whose records can change when its file is
// rewritten or replaced (and Refresh or following sees it). A record file
// opened at one generation reads only bytes of that generation: after a
// change its reads fail (EIO) rather than mix two versions of the record.
// *index.Table implements it.
type Versioned interface {
	// Generation returns the source's content generation.
	Generation() uint64
	// ReadAtGeneration reads record n as ReadAt does, or fails with
	// index.ErrChanged if the source is no longer at generation gen.
	ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error)
}

var _ Versioned = (*index.Table)(nil)

// SeqRecords is Records whose format numbers its records itself (Kafka
// offsets). Its record directories also resolve the unlisted name "@N"
// to the record numbered N, so a record is found by the number users
// know while listings, and so grep -r, see each record once.
// *index.Table implements it.
type SeqRecords interface {
	// BySeq returns the number of the record the format numbers seq.
	BySeq(seq int64) (n int64, ok bool)
}

var _ SeqRecords = (*index.Table)(nil)

// Prover is Records whose record sizes may be claims of a saved index,
// proven as records are read: the kernel is not let cache the attributes
// of a record not proven yet, which change if the claim was a lie.
// *index.Table implements it.
type Prover interface {
	// Proven reports whether record n's place and size are proven.
	Proven(n int64) bool
}

var _ Prover = (*index.Table)(nil)

// proven reports whether the attributes of the record n may be cached:
// unless its source is a Prover that has not proven it yet.
func (t *Tree) proven(n Node) bool {
	n.rd.mu.Lock()
	src := n.rd.src
	n.rd.mu.Unlock()
	p, ok := src.(Prover)
	return !ok || p.Proven(n.N)
}

// OpenFunc returns the table of a record file of a directory tree, which
// the tree opened (see SourceFile). Tree mounts call it lazily, the first
// time a record directory is looked into. It must not open f.Path itself.
type OpenFunc func(ctx context.Context, f SourceFile) (Records, error)

// DetectFunc reports whether the size bytes readable from r are a record
// file. cmd/recfs passes a wrapper of index.Detect.
type DetectFunc func(r io.ReaderAt, size int64) bool
