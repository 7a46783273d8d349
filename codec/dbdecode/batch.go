package dbdecode

import (
	"encoding/binary"
	"strconv"
	"sync"

	"github.com/recfs/recfs/codec/decode"
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
	// CFNames names column families by id (from a MANIFEST); an
	// operation on a named family shows the name instead of the id.
	CFNames map[uint64]string
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
	name    string    // "" for an unknown tag
	cf      bool      // a Varint32 column family id comes first
	nstr    uint8     // length-prefixed strings that follow
	counted bool      // counts toward the header's count
	value   uint8     // how the second string is shown
	keys    [2]string // JSON names of the strings ("" : key, value)
}

// key returns the JSON name of string i of op.
func (op *opSpec) key(i int) string {
	if op.keys[i] != "" {
		return op.keys[i]
	}
	return [2]string{"key", "value"}[i]
}

type opTable [32]opSpec

// common holds the tags leveldb, RocksDB and pebble agree on.
func common() (t opTable) {
	t[0] = opSpec{name: "delete", nstr: 1, counted: true}
	t[1] = opSpec{name: "put", nstr: 2, counted: true}
	t[2] = opSpec{name: "merge", nstr: 2, counted: true}
	t[3] = opSpec{name: "log-data", nstr: 1, keys: [2]string{"data"}}
	t[7] = opSpec{name: "single-delete", nstr: 1, counted: true}
	t[15] = opSpec{name: "range-delete", nstr: 2, counted: true, keys: rangeKeys}
	return t
}

// JSON names of the strings of range operations and transaction markers.
var (
	rangeKeys = [2]string{"key", "end"}
	xidKeys   = [2]string{"xid"}
)

// pebbleOps: pebble's batch kinds (internal/base InternalKeyKind).
var pebbleOps = sync.OnceValue(func() *opTable {
	t := common()
	t[19] = opSpec{name: "range-key-delete", nstr: 2, counted: true, keys: rangeKeys}
	t[20] = opSpec{name: "range-key-unset", nstr: 2, counted: true, value: vRangeKeyUnset}
	t[21] = opSpec{name: "range-key-set", nstr: 2, counted: true, value: vRangeKeySet}
	t[22] = opSpec{name: "ingest-sst", nstr: 1, counted: true}
	t[23] = opSpec{name: "delete-sized", nstr: 2, counted: true, value: vVarint, keys: [2]string{"key", "size"}}
	t[24] = opSpec{name: "excise", nstr: 2, counted: true, keys: rangeKeys}
	return &t
})

// rocksOps: RocksDB's WriteBatch tags (db/dbformat.h ValueType, as read
// by ReadRecordFromWriteBatch).
var rocksOps = sync.OnceValue(func() *opTable {
	t := common()
	t[4] = opSpec{name: "delete-cf", cf: true, nstr: 1, counted: true}
	t[5] = opSpec{name: "put-cf", cf: true, nstr: 2, counted: true}
	t[6] = opSpec{name: "merge-cf", cf: true, nstr: 2, counted: true}
	t[8] = opSpec{name: "single-delete-cf", cf: true, nstr: 1, counted: true}
	t[9] = opSpec{name: "begin-prepare"}
	t[10] = opSpec{name: "end-prepare", nstr: 1, keys: xidKeys}
	t[11] = opSpec{name: "commit", nstr: 1, keys: xidKeys}
	t[12] = opSpec{name: "rollback", nstr: 1, keys: xidKeys}
	t[13] = opSpec{name: "noop"}
	t[14] = opSpec{name: "range-delete-cf", cf: true, nstr: 2, counted: true, keys: rangeKeys}
	t[16] = opSpec{name: "blob-index-cf", cf: true, nstr: 2, counted: true}
	t[17] = opSpec{name: "blob-index", nstr: 2, counted: true}
	t[18] = opSpec{name: "begin-persisted-prepare"}
	t[19] = opSpec{name: "begin-unprepare"}
	t[21] = opSpec{name: "commit-with-ts", nstr: 2, keys: [2]string{"xid", "ts"}}
	t[22] = opSpec{name: "put-entity", nstr: 2, counted: true}
	t[23] = opSpec{name: "put-entity-cf", cf: true, nstr: 2, counted: true}
	t[24] = opSpec{name: "put-preferred-seqno", nstr: 2, counted: true}
	t[25] = opSpec{name: "put-preferred-seqno-cf", cf: true, nstr: 2, counted: true}
	return &t
})

// Batch returns the text of WriteBatch rec (see the package
// documentation); nothing when it is not a WriteBatch.
func Batch(rec []byte, o Options) []byte {
	out, _ := AppendBatch(make([]byte, 0, 2*len(rec)+64), rec, o)
	return out
}

// AppendBatch appends the text of WriteBatch rec to dst. A record that is
// not a WriteBatch (a *DecodeError says why and where) appends nothing.
func AppendBatch(dst, rec []byte, o Options) ([]byte, error) {
	w := decode.NewWriter(dst, decode.Output{}, 0)
	err := writeBatch(w, rec, o)
	return w.B, err
}

// writeBatch writes the lines of WriteBatch rec to w, or nothing and the
// error of a record that is not one. The auto dialect reads pebble's
// tags, then RocksDB's when pebble's reading fails, and reports pebble's
// error when both fail.
func writeBatch(w *decode.Writer, rec []byte, o Options) error {
	start := len(w.B)
	t := pebbleOps()
	if o.Dialect == DialectRocksDB {
		t = rocksOps()
	}
	err := writeBatchAs(w, rec, t, o.CFNames)
	if err != nil {
		w.B = w.B[:start]
	}
	if err == nil || o.Dialect != DialectAuto {
		return err
	}
	if rerr := writeBatchAs(w, rec, rocksOps(), o.CFNames); rerr != nil {
		w.B = w.B[:start]
		return err
	}
	return nil
}

// writeBatchAs writes rec read with tag table t.
func writeBatchAs(w *decode.Writer, rec []byte, t *opTable, cfs map[uint64]string) error {
	if len(rec) < BatchHeaderLen {
		return &DecodeError{At: 0, Reason: "short batch header", Err: ErrMalformed}
	}
	seq := binary.LittleEndian.Uint64(rec)
	count := binary.LittleEndian.Uint32(rec[8:12])
	if uint64(count) > uint64(len(rec)-BatchHeaderLen)/2 {
		// Every counted operation takes at least a tag and a length.
		return &DecodeError{At: 8, Reason: "count " + strconv.FormatUint(uint64(count), 10) + " overruns the payload", Err: ErrMalformed}
	}
	w.BeginSeq("seq", seq)
	if w.JSON() {
		w.Key("op")
		w.B = append(w.B, `"batch"`...)
		w.Key("count")
		w.B = appendUint(w.B, uint64(count))
	} else {
		w.B = append(w.B, "batch seq "...)
		w.B = appendUint(w.B, seq)
		w.B = append(w.B, " count "...)
		w.B = appendUint(w.B, uint64(count))
	}
	w.End()
	r := reader{b: rec, off: BatchHeaderLen}
	var n uint64
	for r.rest() > 0 {
		at := r.off
		tag := rec[at]
		if int(tag) >= len(t) || t[tag].name == "" {
			return &DecodeError{At: at, Reason: "unknown batch tag " + strconv.Itoa(int(tag)), Err: ErrUnknownTag}
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
			return &DecodeError{At: at, Reason: "truncated " + op.name, Err: ErrMalformed}
		}
		opSeq := seq
		if op.counted {
			opSeq += n
			n++
		}
		w.BeginSeq("seq", opSeq)
		if w.JSON() {
			writeOpJSON(w, op, cf, cfs, s)
		} else {
			w.B = appendOp(w.B, op, cf, cfs, s)
		}
		w.End()
	}
	if n != uint64(count) {
		return &DecodeError{At: len(rec), Reason: "header count " + strconv.FormatUint(uint64(count), 10) + ", batch holds " + strconv.FormatUint(n, 10), Err: ErrMalformed}
	}
	return nil
}

// appendCF appends a column family: its name when cfs has one, else its
// id.
func appendCF(dst []byte, cf uint64, cfs map[uint64]string) []byte {
	if name, ok := cfs[cf]; ok {
		return appendEscaped(dst, []byte(name), false)
	}
	return appendUint(dst, cf)
}

// appendOp appends one operation's text (without the line's end): its
// name and fields, the last of which keeps its spaces.
func appendOp(dst []byte, op *opSpec, cf uint64, cfs map[uint64]string, s [2][]byte) []byte {
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
			dst = appendEscaped(dst, s[0], false)
			dst = append(dst, ' ')
			return appendUint(dst, v)
		}
		dst = append(dst, op.name...)
		dst = append(dst, "-raw"...)
	default:
		dst = append(dst, op.name...)
	}
	if op.cf {
		dst = append(dst, ' ')
		dst = appendCF(dst, cf, cfs)
	}
	for i := 0; i < int(op.nstr); i++ {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, s[i], i == int(op.nstr)-1)
	}
	return dst
}

// writeOpJSON writes the fields of one operation's object.
func writeOpJSON(w *decode.Writer, op *opSpec, cf uint64, cfs map[uint64]string, s [2][]byte) {
	name := op.name
	var parts [][]byte
	switch op.value {
	case vRangeKeySet, vRangeKeyUnset:
		var ok bool
		if parts, ok = splitRangeKey(op, s[1]); !ok {
			name += "-raw"
		}
	case vVarint:
		if _, n := binary.Uvarint(s[1]); n <= 0 || n != len(s[1]) {
			name += "-raw"
		}
	}
	w.Key("op")
	w.B = decode.AppendJSONString(w.B, name)
	if op.cf {
		w.Key("cf")
		w.B = appendUint(w.B, cf)
		if n, ok := cfs[cf]; ok {
			w.Key("cf_name")
			w.B = decode.AppendJSONBytes(w.B, []byte(n))
		}
	}
	if parts != nil {
		w.Key("key")
		w.B = decode.AppendJSONBytes(w.B, s[0])
		w.Key("end")
		w.B = decode.AppendJSONBytes(w.B, parts[0])
		w.Key(map[uint8]string{vRangeKeySet: "suffix_values", vRangeKeyUnset: "suffixes"}[op.value])
		w.B = append(w.B, '[')
		for i, p := range parts[1:] {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.B = decode.AppendJSONBytes(w.B, p)
		}
		w.B = append(w.B, ']')
		return
	}
	for i := 0; i < int(op.nstr); i++ {
		w.Key(op.key(i))
		if i == 1 && op.value == vVarint && name == op.name {
			v, _ := binary.Uvarint(s[1])
			w.B = appendUint(w.B, v)
			continue
		}
		w.B = decode.AppendJSONBytes(w.B, s[i])
	}
}

// splitRangeKey splits a pebble range key's value into its end key and
// then, for a set, SUFFIX VALUE pairs, for an unset, suffixes; false when
// the value is not such an encoding.
func splitRangeKey(op *opSpec, v []byte) ([][]byte, bool) {
	r := reader{b: v}
	end, ok := r.str()
	if !ok {
		return nil, false
	}
	parts := [][]byte{end}
	for ok && r.rest() > 0 {
		var p []byte
		p, ok = r.str()
		parts = append(parts, p)
	}
	if !ok || (op.value == vRangeKeySet && len(parts)%2 == 0) {
		return nil, false
	}
	return parts, true
}

// appendRangeKey shows a pebble range key: START END then, for a set,
// SUFFIX VALUE pairs, for an unset, SUFFIXes. It reports false, having
// appended nothing, when the value is not such an encoding.
func appendRangeKey(dst []byte, op *opSpec, s [2][]byte) ([]byte, bool) {
	parts, ok := splitRangeKey(op, s[1])
	if !ok {
		return dst, false
	}
	// The number of fields varies: no field keeps its spaces.
	dst = append(dst, op.name...)
	dst = append(dst, ' ')
	dst = appendEscaped(dst, s[0], false)
	for _, p := range parts {
		dst = append(dst, ' ')
		dst = appendEscaped(dst, p, false)
	}
	return dst, true
}
