package dbdecode

import (
	"encoding/binary"
	"strconv"
)

// VersionEdit tags: leveldb's (1-9), RocksDB's (10, 100-103, 200-203, 300,
// 400-401, and the ignorable ones from 8192) and pebble's (104-108).
const (
	tagComparator         = 1
	tagLogNumber          = 2
	tagNextFile           = 3
	tagLastSeq            = 4
	tagCompactPointer     = 5
	tagDeletedFile        = 6
	tagNewFile            = 7
	tagPrevLogNumber      = 9
	tagMinLogNumberToKeep = 10
	tagNewFile2           = 100
	tagNewFile3           = 102
	tagNewFile4           = 103
	tagNewFile5           = 104
	tagCreatedBacking     = 105
	tagRemovedBacking     = 106
	tagNewBlobFile        = 107
	tagDeletedBlobFile    = 108
	tagColumnFamily       = 200
	tagColumnFamilyAdd    = 201
	tagColumnFamilyDrop   = 202
	tagMaxColumnFamily    = 203
	tagInAtomicGroup      = 300
	tagBlobFileAddition   = 400
	tagBlobFileGarbage    = 401
	tagSafeIgnoreMask     = 1 << 13
	tagDBID               = tagSafeIgnoreMask + 1
	tagWalAddition        = tagSafeIgnoreMask + 4
	tagWalDeletion        = tagSafeIgnoreMask + 5
	tagFullHistoryTsLow   = tagSafeIgnoreMask + 6
	tagWalAddition2       = tagSafeIgnoreMask + 7
	tagWalDeletion2       = tagSafeIgnoreMask + 8
	tagPersistUDT         = tagSafeIgnoreMask + 9
)

// Custom field tags of new-file-4 and -5 entries (RocksDB's NewFileCustomTag
// and pebble's customTag). Pebble writes 66 and 69 without a length prefix.
const (
	customTerminate   = 1
	customVirtual     = 66
	customBlobRefs    = 69
	customNonSafeMask = 1 << 6
)

// customNames names the custom fields; kinds say how their bytes show.
var customNames = map[uint64]struct {
	name string
	kind uint8
}{
	2:  {"need-compaction", fNumber},
	3:  {"min-log-to-keep", fFixed64},
	4:  {"oldest-blob-file", fNumber},
	5:  {"oldest-ancester-time", fNumber},
	6:  {"creation-time", fNumber},
	7:  {"checksum", fHex},
	8:  {"checksum-func", fText},
	9:  {"temperature", fNumber},
	10: {"min-ts", fText},
	11: {"max-ts", fText},
	12: {"unique-id", fHex},
	13: {"epoch", fNumber},
	14: {"compensated-range-deletion-size", fNumber},
	15: {"tail-size", fNumber},
	16: {"ts-persisted", fNumber},
	65: {"path-id", fNumber},
	67: {"synthetic-prefix", fText},
	68: {"synthetic-suffix", fText},
}

// How a length-prefixed field shows: fNumber as a decimal when its bytes
// are exactly one varint, fFixed64 when they are 8 little-endian bytes
// (else both as raw:HEX), fText escaped, fHex in hex, fIKey as an internal
// key USERKEY#SEQ,KIND.
const (
	fNumber uint8 = iota
	fFixed64
	fText
	fHex
	fIKey
)

// VersionEdit returns the text of VersionEdit rec (see the package
// documentation).
func VersionEdit(rec []byte) []byte {
	out, _ := AppendVersionEdit(make([]byte, 0, 2*len(rec)+64), rec)
	return out
}

// AppendVersionEdit appends the text of VersionEdit rec to dst, one line
// per field. The error, a *DecodeError, says why the record did not decode
// completely; the text says so too, after every field that did decode.
func AppendVersionEdit(dst, rec []byte) ([]byte, error) {
	r := reader{b: rec}
	for r.rest() > 0 {
		at := r.off
		tag, ok := r.uvarint32()
		if !ok {
			dst = failText(dst, "bad tag varint", rec, at)
			return dst, &DecodeError{At: at, Reason: "bad tag varint", Err: ErrMalformed}
		}
		line := len(dst)
		var name string
		dst, name, ok = appendEditField(dst, &r, tag)
		if name == "" {
			dst = unknownText(dst[:line], tag, rec, at)
			return dst, &DecodeError{At: at, Reason: "unknown manifest tag " + strconv.FormatUint(tag, 10), Err: ErrUnknownTag}
		}
		if !ok {
			r.off = at
			dst = failText(dst[:line], "truncated or malformed "+name, rec, at)
			return dst, &DecodeError{At: at, Reason: "malformed " + name, Err: ErrMalformed}
		}
	}
	return dst, nil
}

// appendEditField appends the line of one field whose tag r has just read.
// It returns the field's name ("" for an unknown tag) and whether its bytes
// were well formed; on false the caller drops what was appended.
func appendEditField(dst []byte, r *reader, tag uint64) ([]byte, string, bool) {
	if l, ok := editLines[tag]; ok {
		return line(dst, r, l.name, l.parts...)
	}
	var ok bool
	switch tag {
	case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4, tagNewFile5:
		dst, ok = newFile(dst, r, tag)
		return dst, "add-file", ok
	case tagWalAddition, tagWalDeletion:
		dst, ok = walField(dst, r, tag == tagWalAddition)
		return dst, "wal", ok
	case tagWalAddition2, tagWalDeletion2:
		body, ok := r.str()
		if !ok {
			return dst, "wal", false
		}
		sub := reader{b: body}
		line := len(dst)
		if out, ok := walField(dst, &sub, tag == tagWalAddition2); ok && sub.rest() == 0 {
			return out, "wal", true
		}
		dst = append(dst[:line], "wal-raw "...)
		dst = appendHex(dst, body)
		return append(dst, '\n'), "wal", true
	}
	if tag&tagSafeIgnoreMask != 0 {
		// RocksDB: a tag from the future with this bit is followed by a
		// length-prefixed body and may be skipped; show it in hex.
		body, ok := r.str()
		if !ok {
			return dst, "ignorable-tag", false
		}
		dst = append(dst, "ignorable-tag "...)
		dst = appendUint(dst, tag)
		dst = append(dst, ' ')
		dst = appendHex(dst, body)
		return append(dst, '\n'), "ignorable-tag", true
	}
	return dst, "", false
}

// editLine is how the line of a field is shown: its name, then its parts
// in the order they are encoded.
type editLine struct {
	name  string
	parts []part
}

// editLines holds the fields whose line is a name followed by parts.
var editLines = map[uint64]editLine{
	tagComparator:         {"comparator", []part{strPart(" ", fText)}},
	tagLogNumber:          {"log-number", []part{numsPart(" ")}},
	tagNextFile:           {"next-file", []part{numsPart(" ")}},
	tagLastSeq:            {"last-seq", []part{numsPart(" ")}},
	tagPrevLogNumber:      {"prev-log-number", []part{numsPart(" ")}},
	tagMinLogNumberToKeep: {"min-log-number-to-keep", []part{numsPart(" ")}},
	tagCompactPointer:     {"compact-pointer", []part{level, strPart(" ", fIKey)}},
	tagDeletedFile:        {"delete-file", []part{level, numsPart(" ")}},
	tagCreatedBacking:     {"add-backing", []part{numsPart(" ", " size=")}},
	tagRemovedBacking:     {"delete-backing", []part{numsPart(" ")}},
	tagNewBlobFile:        {"add-blob-file", []part{numsPart(" id=", " file=", " size=", " value-size=", " creation-time=")}},
	tagDeletedBlobFile:    {"delete-blob-file", []part{numsPart(" id=", " file=")}},
	tagColumnFamily:       {"column-family", []part{numsPart(" ")}},
	tagColumnFamilyAdd:    {"add-column-family", []part{strPart(" ", fText)}},
	tagColumnFamilyDrop:   {"drop-column-family", nil},
	tagMaxColumnFamily:    {"max-column-family", []part{numsPart(" ")}},
	tagInAtomicGroup:      {"atomic-group-remaining", []part{numsPart(" ")}},
	tagBlobFileAddition: {"blob-file-addition", []part{
		numsPart(" file=", " count=", " bytes="),
		strPart(" checksum-method=", fText), strPart(" checksum=", fHex), blobCustoms,
	}},
	tagBlobFileGarbage:  {"blob-file-garbage", []part{numsPart(" file=", " count=", " bytes="), blobCustoms}},
	tagDBID:             {"db-id", []part{strPart(" ", fText)}},
	tagFullHistoryTsLow: {"full-history-ts-low", []part{strPart(" ", fText)}},
	tagPersistUDT:       {"persist-user-defined-timestamps", []part{strPart(" ", fText)}},
}

// blobCustoms is the part of custom fields ending a blob-file field.
func blobCustoms(dst []byte, r *reader) ([]byte, bool) { return customs(dst, r, false) }

// A part reads one part of a field from r and appends how it is shown.
type part func(dst []byte, r *reader) ([]byte, bool)

// line appends name and the parts read from r, and ends the line. It stops
// at the first malformed part.
func line(dst []byte, r *reader, name string, parts ...part) ([]byte, string, bool) {
	dst = append(dst, name...)
	for _, p := range parts {
		var ok bool
		if dst, ok = p(dst, r); !ok {
			return dst, name, false
		}
	}
	return append(dst, '\n'), name, true
}

// numsPart is a part of one varint per separator (see nums).
func numsPart(seps ...string) part {
	return func(dst []byte, r *reader) ([]byte, bool) { return nums(dst, r, seps...) }
}

// strPart is a part of one length-prefixed string (see strField).
func strPart(sep string, kind uint8) part {
	return func(dst []byte, r *reader) ([]byte, bool) { return strField(dst, r, sep, kind) }
}

// walField shows RocksDB's WalAddition (log number, then tagged fields:
// 1 ends them, 2 is the synced size) or WalDeletion (a log number).
func walField(dst []byte, r *reader, add bool) ([]byte, bool) {
	if !add {
		dst = append(dst, "wal-delete"...)
		dst, ok := num(dst, r, " log=")
		return append(dst, '\n'), ok
	}
	dst = append(dst, "wal-add"...)
	dst, ok := num(dst, r, " log=")
	for ok {
		var t uint64
		if t, ok = r.uvarint32(); !ok || t == 1 {
			break
		}
		if t != 2 {
			return dst, false
		}
		dst, ok = num(dst, r, " synced-size=")
	}
	return append(dst, '\n'), ok
}

// num reads a varint and appends sep and its value.
func num(dst []byte, r *reader, sep string) ([]byte, bool) {
	v, ok := r.uvarint()
	if !ok {
		return dst, false
	}
	dst = append(dst, sep...)
	return appendUint(dst, v), true
}

// nums reads one varint per separator.
func nums(dst []byte, r *reader, seps ...string) ([]byte, bool) {
	ok := true
	for _, s := range seps {
		if dst, ok = num(dst, r, s); !ok {
			break
		}
	}
	return dst, ok
}

// level reads a level and appends " L<level>".
func level(dst []byte, r *reader) ([]byte, bool) {
	v, ok := r.uvarint32()
	if !ok {
		return dst, false
	}
	dst = append(dst, " L"...)
	return appendUint(dst, v), true
}

// strField reads a length-prefixed string and appends sep and its bytes.
func strField(dst []byte, r *reader, sep string, kind uint8) ([]byte, bool) {
	s, ok := r.str()
	if !ok {
		return dst, false
	}
	dst = append(dst, sep...)
	return appendField(dst, s, kind), true
}

func appendField(dst, s []byte, kind uint8) []byte {
	switch kind {
	case fNumber:
		if v, n := binary.Uvarint(s); n > 0 && n == len(s) {
			return appendUint(dst, v)
		}
		if len(s) == 0 {
			return dst
		}
		dst = append(dst, "raw:"...)
		return appendHex(dst, s)
	case fFixed64:
		if len(s) == 8 {
			return appendUint(dst, binary.LittleEndian.Uint64(s))
		}
		dst = append(dst, "raw:"...)
		return appendHex(dst, s)
	case fHex:
		return appendHex(dst, s)
	case fIKey:
		return appendIKey(dst, s)
	}
	return appendEscaped(dst, s)
}

// appendIKey shows an internal key: user key, then the 8-byte trailer as
// #SEQ,KIND; a key too short for a trailer shows as its bytes and #short.
func appendIKey(dst, k []byte) []byte {
	if len(k) < 8 {
		dst = appendEscaped(dst, k)
		return append(dst, "#short"...)
	}
	n := len(k) - 8
	t := binary.LittleEndian.Uint64(k[n:])
	dst = appendEscaped(dst, k[:n])
	dst = append(dst, '#')
	dst = appendUint(dst, t>>8)
	dst = append(dst, ',')
	return appendUint(dst, t&0xff)
}

// newFile shows a new-file entry of any of the five encodings.
func newFile(dst []byte, r *reader, tag uint64) ([]byte, bool) {
	dst = append(dst, "add-file"...)
	dst, ok := level(dst, r)
	if ok {
		dst, ok = num(dst, r, " ")
	}
	if ok && tag == tagNewFile3 {
		dst, ok = num(dst, r, " path-id=")
	}
	if ok {
		dst, ok = num(dst, r, " size=")
	}
	if !ok {
		return dst, false
	}
	if tag != tagNewFile5 {
		if dst, ok = strField(dst, r, " smallest=", fIKey); ok {
			dst, ok = strField(dst, r, " largest=", fIKey)
		}
	} else {
		// Pebble: a marker byte says whether point-key bounds come first
		// (bit 0) and which bounds are the table's overall ones (bits 1, 2).
		var m []byte
		if m, ok = r.fixed(1); !ok {
			return dst, false
		}
		dst = append(dst, " bounds="...)
		dst = appendUint(dst, uint64(m[0]))
		if m[0]&1 != 0 {
			if dst, ok = strField(dst, r, " smallest=", fIKey); ok {
				dst, ok = strField(dst, r, " largest=", fIKey)
			}
		}
		if ok {
			if dst, ok = strField(dst, r, " range-smallest=", fIKey); ok {
				dst, ok = strField(dst, r, " range-largest=", fIKey)
			}
		}
	}
	if ok && tag != tagNewFile {
		var lo, hi uint64
		if lo, ok = r.uvarint(); ok {
			hi, ok = r.uvarint()
		}
		if ok {
			dst = append(dst, " seqs="...)
			dst = appendUint(dst, lo)
			dst = append(dst, '-')
			dst = appendUint(dst, hi)
		}
	}
	if ok && (tag == tagNewFile4 || tag == tagNewFile5) {
		dst, ok = customs(dst, r, true)
	}
	return append(dst, '\n'), ok
}

// customs shows tagged custom fields up to their terminating tag 1. Each is
// a Varint32 tag and a length-prefixed body, except pebble's virtual-backing
// (66) and blob references (69) in new-file entries (withPebble).
func customs(dst []byte, r *reader, withPebble bool) ([]byte, bool) {
	for {
		t, ok := r.uvarint32()
		if !ok {
			return dst, false
		}
		if t == customTerminate {
			return dst, true
		}
		if withPebble && t == customVirtual {
			if dst, ok = num(dst, r, " virtual-backing="); !ok {
				return dst, false
			}
			continue
		}
		if withPebble && t == customBlobRefs {
			if dst, ok = blobRefs(dst, r); !ok {
				return dst, false
			}
			continue
		}
		s, ok := r.str()
		if !ok {
			return dst, false
		}
		c, known := customNames[t]
		dst = append(dst, ' ')
		if known {
			dst = append(dst, c.name...)
		} else {
			dst = append(dst, "custom-"...)
			dst = appendUint(dst, t)
			c.kind = fHex
		}
		dst = append(dst, '=')
		dst = appendField(dst, s, c.kind)
	}
}

// blobRefs shows pebble's blob references: depth, count, then per
// reference a blob file id and a value size.
func blobRefs(dst []byte, r *reader) ([]byte, bool) {
	depth, ok := r.uvarint()
	if !ok {
		return dst, false
	}
	n, ok := r.uvarint()
	if !ok || n > uint64(r.rest()) { // every reference takes >= 2 bytes
		return dst, false
	}
	dst = append(dst, " blob-depth="...)
	dst = appendUint(dst, depth)
	dst = append(dst, " blob-refs="...)
	for i := uint64(0); i < n; i++ {
		id, ok := r.uvarint()
		if !ok {
			return dst, false
		}
		size, ok := r.uvarint()
		if !ok {
			return dst, false
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendUint(dst, id)
		dst = append(dst, ':')
		dst = appendUint(dst, size)
	}
	return dst, true
}
