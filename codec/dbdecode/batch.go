package dbdecode

import (
	"encoding/binary"
	"strconv"
)

// Dialect says which database wrote a batch; it matters only for the tags
// RocksDB and pebble use differently (17 to 24).
type Dialect uint8

const (
	// DialectAuto reads a batch as pebble's and, when that fails, as
	// RocksDB's; if both fail it shows pebble's reading with its error.
	DialectAuto Dialect = iota
	// DialectPebble reads pebble's tags (leveldb's are a subset).
	DialectPebble
	// DialectRocksDB reads RocksDB's tags.
	DialectRocksDB
)

// String names the dialect as ParseDialect accepts it.
func (d Dialect) String() string {
	switch d {
	case DialectPebble:
		return "pebble"
	case DialectRocksDB:
		return "rocksdb"
	}
	return "auto"
}

// Options tune the batch decoder; the zero value is ready to use.
type Options struct {
	// Dialect chooses between RocksDB's and pebble's meaning of a tag.
	Dialect Dialect
}

// BatchHeaderLen is the length of a WriteBatch header: a little-endian
// 64-bit sequence number and a 32-bit operation count.
const BatchHeaderLen = 12

// value formats of an operation's second string.
const (
	vPlain uint8 = iota
	vRangeKeySet
	vRangeKeyUnset
	vVarint
)

// opSpec says how one tag is laid out and shown.
type opSpec struct {
	name    string // "" for an unknown tag
	cf      bool   // a Varint32 column family id comes first
	nstr    uint8  // length-prefixed strings that follow
	counted bool   // counts toward the header's count
	value   uint8  // how the second string is shown
}

type opTable [32]opSpec

// common holds the tags leveldb, RocksDB and pebble agree on.
func common() (t opTable) {
	t[0] = opSpec{name: "delete", nstr: 1, counted: true}
	t[1] = opSpec{name: "put", nstr: 2, counted: true}
	t[2] = opSpec{name: "merge", nstr: 2, counted: true}
	t[3] = opSpec{name: "log-data", nstr: 1}
	t[7] = opSpec{name: "single-delete", nstr: 1, counted: true}
	t[15] = opSpec{name: "range-delete", nstr: 2, counted: true}
	return t
}

// pebbleOps: pebble's batch kinds (internal/base InternalKeyKind).
var pebbleOps = func() opTable {
	t := common()
	t[19] = opSpec{name: "range-key-delete", nstr: 2, counted: true}
	t[20] = opSpec{name: "range-key-unset", nstr: 2, counted: true, value: vRangeKeyUnset}
	t[21] = opSpec{name: "range-key-set", nstr: 2, counted: true, value: vRangeKeySet}
	t[22] = opSpec{name: "ingest-sst", nstr: 1, counted: true}
	t[23] = opSpec{name: "delete-sized", nstr: 2, counted: true, value: vVarint}
	t[24] = opSpec{name: "excise", nstr: 2, counted: true}
	return t
}()

// rocksOps: RocksDB's WriteBatch tags (db/dbformat.h ValueType, as read
// by ReadRecordFromWriteBatch).
var rocksOps = func() opTable {
	t := common()
	t[4] = opSpec{name: "delete-cf", cf: true, nstr: 1, counted: true}
	t[5] = opSpec{name: "put-cf", cf: true, nstr: 2, counted: true}
	t[6] = opSpec{name: "merge-cf", cf: true, nstr: 2, counted: true}
	t[8] = opSpec{name: "single-delete-cf", cf: true, nstr: 1, counted: true}
	t[9] = opSpec{name: "begin-prepare"}
	t[10] = opSpec{name: "end-prepare", nstr: 1}
	t[11] = opSpec{name: "commit", nstr: 1}
	t[12] = opSpec{name: "rollback", nstr: 1}
	t[13] = opSpec{name: "noop"}
	t[14] = opSpec{name: "range-delete-cf", cf: true, nstr: 2, counted: true}
	t[16] = opSpec{name: "blob-index-cf", cf: true, nstr: 2, counted: true}
	t[17] = opSpec{name: "blob-index", nstr: 2, counted: true}
	t[18] = opSpec{name: "begin-persisted-prepare"}
	t[19] = opSpec{name: "begin-unprepare"}
	t[21] = opSpec{name: "commit-with-ts", nstr: 2}
	t[22] = opSpec{name: "put-entity", nstr: 2, counted: true}
	t[23] = opSpec{name: "put-entity-cf", cf: true, nstr: 2, counted: true}
	t[24] = opSpec{name: "put-preferred-seqno", nstr: 2, counted: true}
	t[25] = opSpec{name: "put-preferred-seqno-cf", cf: true, nstr: 2, counted: true}
	return t
}()

// Batch returns the text of WriteBatch rec (see the package documentation).
func Batch(rec []byte, o Options) []byte {
	out, _ := AppendBatch(make([]byte, 0, 2*len(rec)+64), rec, o)
	return out
}

// AppendBatch appends the text of WriteBatch rec to dst. The error, a
// *DecodeError, says why the record did not decode completely; the text
// says so too, after every operation that did decode.
func AppendBatch(dst, rec []byte, o Options) ([]byte, error) {
	switch o.Dialect {
	case DialectPebble:
		return appendBatch(dst, rec, &pebbleOps)
	case DialectRocksDB:
		return appendBatch(dst, rec, &rocksOps)
	}
	start := len(dst)
	out, err := appendBatch(dst, rec, &pebbleOps)
	if err == nil {
		return out, nil
	}
	alt, altErr := appendBatch(nil, rec, &rocksOps)
	if altErr != nil {
		return out, err
	}
	return append(out[:start], alt...), nil
}

func appendBatch(dst, rec []byte, t *opTable) ([]byte, error) {
	if len(rec) < BatchHeaderLen {
		dst = failText(dst, "batch header needs 12 bytes", rec, 0)
		return dst, &DecodeError{At: 0, Reason: "short batch header", Err: ErrMalformed}
	}
	count := binary.LittleEndian.Uint32(rec[8:12])
	dst = append(dst, "batch seq "...)
	dst = appendUint(dst, binary.LittleEndian.Uint64(rec))
	dst = append(dst, " count "...)
	dst = appendUint(dst, uint64(count))
	dst = append(dst, '\n')
	r := reader{b: rec, off: BatchHeaderLen}
	var n uint64
	for r.rest() > 0 {
		at := r.off
		tag := rec[at]
		if int(tag) >= len(t) || t[tag].name == "" {
			dst = unknownText(dst, uint64(tag), rec, at)
			return dst, &DecodeError{At: at, Reason: "unknown batch tag " + strconv.Itoa(int(tag)), Err: ErrUnknownTag}
		}
		op := &t[tag]
		r.off++
		var cf uint64
		var s [2][]byte
		ok := true
		if op.cf {
			cf, ok = r.uvarint32()
		}
		for i := 0; ok && i < int(op.nstr); i++ {
			s[i], ok = r.str()
		}
		if !ok {
			r.off = at
			dst = failText(dst, "truncated "+op.name, rec, at)
			return dst, &DecodeError{At: at, Reason: "truncated " + op.name, Err: ErrMalformed}
		}
		if op.counted {
			n++
		}
		dst = appendOp(dst, op, cf, s)
	}
	if n != uint64(count) {
		dst = append(dst, "error: header count "...)
		dst = appendUint(dst, uint64(count))
		dst = append(dst, ", batch holds "...)
		dst = appendUint(dst, n)
		dst = append(dst, '\n')
		return dst, &DecodeError{At: len(rec), Reason: "count mismatch", Err: ErrMalformed}
	}
	return dst, nil
}

// appendOp appends one operation's line.
func appendOp(dst []byte, op *opSpec, cf uint64, s [2][]byte) []byte {
	switch op.value {
	case vRangeKeySet, vRangeKeyUnset:
		if out, ok := appendRangeKey(dst, op, s); ok {
			return out
		}
		dst = append(dst, op.name...)
		dst = append(dst, "-raw"...)
	case vVarint:
		if v, n := binary.Uvarint(s[1]); n > 0 && n == len(s[1]) {
			dst = append(dst, op.name...)
			dst = append(dst, ' ')
			dst = appendEscaped(dst, s[0])
			dst = append(dst, ' ')
			dst = appendUint(dst, v)
			return append(dst, '\n')
		}
		dst = append(dst, op.name...)
		dst = append(dst, "-raw"...)
	default:
		dst = append(dst, op.name...)
	}
	if op.cf {
		dst = append(dst, ' ')
		dst = appendUint(dst, cf)
	}
	for i := 0; i < int(op.nstr); i++ {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, s[i])
	}
	return append(dst, '\n')
}

// appendRangeKey shows a pebble range key: START END then, for a set,
// SUFFIX VALUE pairs, for an unset, SUFFIXes. It reports false, having
// appended nothing, when the value is not such an encoding.
func appendRangeKey(dst []byte, op *opSpec, s [2][]byte) ([]byte, bool) {
	r := reader{b: s[1]}
	end, ok := r.str()
	if !ok {
		return dst, false
	}
	var parts [][]byte
	for ok && r.rest() > 0 {
		var p []byte
		p, ok = r.str()
		parts = append(parts, p)
	}
	if !ok || (op.value == vRangeKeySet && len(parts)%2 != 0) {
		return dst, false
	}
	dst = append(dst, op.name...)
	dst = append(dst, ' ')
	dst = appendEscaped(dst, s[0])
	dst = append(dst, ' ')
	dst = appendEscaped(dst, end)
	for _, p := range parts {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, p)
	}
	return append(dst, '\n'), true
}
