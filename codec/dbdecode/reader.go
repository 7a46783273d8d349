package dbdecode

import (
	"encoding/binary"
	"math"
)

// reader walks one record; every method reports whether the bytes were
// there and well formed, and leaves off unchanged when they were not.
type reader struct {
	b   []byte
	off int
}

func (r *reader) rest() int { return len(r.b) - r.off }

// uvarint reads a varint of at most 64 bits.
func (r *reader) uvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		return 0, false
	}
	r.off += n
	return v, true
}

// uvarint32 reads a varint of at most 32 bits (RocksDB's Varint32).
func (r *reader) uvarint32() (uint64, bool) {
	save := r.off
	v, ok := r.uvarint()
	if !ok || v > math.MaxUint32 {
		r.off = save
		return 0, false
	}
	return v, true
}

// str reads a length-prefixed byte string (Varint32 length, then bytes).
func (r *reader) str() ([]byte, bool) {
	save := r.off
	n, ok := r.uvarint32()
	if !ok || n > uint64(r.rest()) {
		r.off = save
		return nil, false
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, true
}

// fixed reads n bytes.
func (r *reader) fixed(n int) ([]byte, bool) {
	if r.rest() < n {
		return nil, false
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, true
}

// MaxTextLen bounds the length of the text [AppendBatch] or
// [AppendVersionEdit] appends for a record of n bytes, in any output.
func MaxTextLen(n int) int { return 64*n + 256 }
