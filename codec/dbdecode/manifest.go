package dbdecode

import (
	"encoding/binary"
	"strconv"
	"sync"
	"time"

	"github.com/recfs/recfs/codec/decode"
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
	customTerminate = 1
	customVirtual   = 66
	customBlobRefs  = 69
)

// How a part of a field shows (see part).
const (
	sNum   uint8 = iota // a decimal number
	sFile               // a file number, zero-padded to 6 digits
	sTime               // seconds since 1970, as an RFC 3339 time (0 as 0)
	sLevel              // a level, "L3"
	sText               // bytes, escaped
	sHex                // bytes in hex
	sRaw                // bytes that should have been a number: raw:HEX
	sIKey               // an internal key, USERKEY#SEQ,KIND
	sSeqs               // a sequence range, LO-HI (num and num2)
	sRefs               // pebble blob references, ID:SIZE,... (b holds them encoded)
)

// part is one value of a field: how it shows, its key (text: "key=",
// except positional parts; JSON: the field's key, "-" as "_"), and its
// value.
type part struct {
	key       string
	show      uint8
	pos       bool // text: the value alone, without "key="
	num, num2 uint64
	b         []byte
}

// field is one field of a VersionEdit: its name and parts in record order.
type field struct {
	tag   uint64
	name  string
	parts []part
}

// add appends a part.
func (f *field) add(p part) { f.parts = append(f.parts, p) }

// editReader reads the fields of one VersionEdit.
type editReader struct {
	r reader
	f field
	// rocks is set by fields only RocksDB writes (it names key kinds).
	rocks bool
	walOK bool // the last WAL field read was well formed
}

// next reads the next field; ok is false at the end, err says why a
// record stops early.
func (e *editReader) next() (ok bool, err error) {
	if e.r.rest() == 0 {
		return false, nil
	}
	at := e.r.off
	tag, ok := e.r.uvarint32()
	if !ok {
		return false, &DecodeError{At: at, Reason: "bad tag varint", Err: ErrMalformed}
	}
	e.f = field{tag: tag, parts: e.f.parts[:0]}
	name, known, good := e.readField(tag)
	if !known {
		return false, &DecodeError{At: at, Reason: "unknown manifest tag " + strconv.FormatUint(tag, 10), Err: ErrUnknownTag}
	}
	if !good {
		return false, &DecodeError{At: at, Reason: "truncated or malformed " + name, Err: ErrMalformed}
	}
	e.f.name = name
	return true, nil
}

// simple are the fields made of a fixed list of parts.
var simple = sync.OnceValue(func() map[uint64]simpleField {
	return map[uint64]simpleField{
		tagComparator:         {"comparator", []part{{key: "name", show: sText, pos: true}}},
		tagLogNumber:          {"log-number", []part{{key: "file", show: sFile, pos: true}}},
		tagNextFile:           {"next-file", []part{{key: "file", show: sFile, pos: true}}},
		tagLastSeq:            {"last-seq", []part{{key: "seq", show: sNum, pos: true}}},
		tagPrevLogNumber:      {"prev-log-number", []part{{key: "file", show: sFile, pos: true}}},
		tagMinLogNumberToKeep: {"min-log-number-to-keep", []part{{key: "file", show: sFile, pos: true}}},
		tagCompactPointer:     {"compact-pointer", []part{{key: "level", show: sLevel, pos: true}, {key: "key", show: sIKey, pos: true}}},
		tagDeletedFile:        {"delete-file", []part{{key: "level", show: sLevel, pos: true}, {key: "file", show: sFile, pos: true}}},
		tagCreatedBacking:     {"add-backing", []part{{key: "file", show: sFile, pos: true}, {key: "size", show: sNum}}},
		tagRemovedBacking:     {"delete-backing", []part{{key: "file", show: sFile, pos: true}}},
		tagNewBlobFile: {"add-blob-file", []part{{key: "id", show: sNum}, {key: "file", show: sFile}, {key: "size", show: sNum},
			{key: "value-size", show: sNum}, {key: "creation-time", show: sTime}}},
		tagDeletedBlobFile:  {"delete-blob-file", []part{{key: "id", show: sNum}, {key: "file", show: sFile}}},
		tagColumnFamily:     {"column-family", []part{{key: "id", show: sNum, pos: true}}},
		tagColumnFamilyAdd:  {"add-column-family", []part{{key: "name", show: sText, pos: true}}},
		tagColumnFamilyDrop: {"drop-column-family", nil},
		tagMaxColumnFamily:  {"max-column-family", []part{{key: "id", show: sNum, pos: true}}},
		tagInAtomicGroup:    {"atomic-group-remaining", []part{{key: "count", show: sNum, pos: true}}},
		tagBlobFileAddition: {"blob-file-addition", []part{{key: "file", show: sFile}, {key: "count", show: sNum}, {key: "bytes", show: sNum},
			{key: "checksum-method", show: sText}, {key: "checksum", show: sHex}}},
		tagBlobFileGarbage:  {"blob-file-garbage", []part{{key: "file", show: sFile}, {key: "count", show: sNum}, {key: "bytes", show: sNum}}},
		tagDBID:             {"db-id", []part{{key: "id", show: sText, pos: true}}},
		tagFullHistoryTsLow: {"full-history-ts-low", []part{{key: "ts", show: sHex, pos: true}}},
		tagPersistUDT:       {"persist-user-defined-timestamps", []part{{key: "value", show: sHex, pos: true}}},
	}
})

// simpleField is a field made of a fixed list of parts.
type simpleField struct {
	name  string
	parts []part
}

// rocksOnly reports whether only RocksDB writes tag.
func rocksOnly(tag uint64) bool {
	switch tag {
	case tagMinLogNumberToKeep, tagNewFile2, tagNewFile3, tagColumnFamily, tagColumnFamilyAdd, tagColumnFamilyDrop,
		tagMaxColumnFamily, tagInAtomicGroup, tagBlobFileAddition, tagBlobFileGarbage:
		return true
	}
	return false
}

// readField reads the body of a field with tag; known is false for an
// unknown tag, good for a well-formed body.
func (e *editReader) readField(tag uint64) (name string, known, good bool) {
	r := &e.r
	e.rocks = e.rocks || rocksOnly(tag) || tag&tagSafeIgnoreMask != 0
	if s, ok := simple()[tag]; ok {
		for _, p := range s.parts {
			if !e.readPart(p) {
				return s.name, true, false
			}
		}
		if tag == tagBlobFileAddition || tag == tagBlobFileGarbage {
			return s.name, true, e.customs(false)
		}
		return s.name, true, true
	}
	switch tag {
	case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4, tagNewFile5:
		return "add-file", true, e.newFile(tag)
	case tagWalAddition, tagWalDeletion:
		return e.wal(r, tag == tagWalAddition), true, e.walOK
	case tagWalAddition2, tagWalDeletion2:
		body, ok := r.str()
		if !ok {
			return "wal", true, false
		}
		sub := editReader{r: reader{b: body}, f: e.f}
		name := sub.wal(&sub.r, tag == tagWalAddition2)
		if sub.walOK && sub.r.rest() == 0 {
			e.f = sub.f
			return name, true, true
		}
		e.f.parts = e.f.parts[:0]
		e.f.add(part{key: "body", show: sHex, pos: true, b: body})
		return "wal-raw", true, true
	}
	if tag&tagSafeIgnoreMask != 0 {
		// RocksDB: a tag from the future with this bit is followed by a
		// length-prefixed body and may be skipped; show it in hex.
		body, ok := r.str()
		e.f.add(part{key: "tag", show: sNum, pos: true, num: tag})
		e.f.add(part{key: "body", show: sHex, pos: true, b: body})
		return "ignorable-tag", true, ok
	}
	return "", false, false
}

// readPart reads one part shaped like p: a varint for numbers, a
// length-prefixed string for bytes.
func (e *editReader) readPart(p part) bool {
	var ok bool
	switch p.show {
	case sText, sHex, sIKey:
		p.b, ok = e.r.str()
	case sLevel:
		p.num, ok = e.r.uvarint32()
	default:
		p.num, ok = e.r.uvarint()
	}
	if ok {
		e.f.add(p)
	}
	return ok
}

// wal reads RocksDB's WalAddition (log number, then tagged fields: 1 ends
// them, 2 is the synced size) or WalDeletion (a log number); walOK says
// whether it was well formed.
func (e *editReader) wal(r *reader, add bool) string {
	name := "wal-delete"
	if add {
		name = "wal-add"
	}
	e.walOK = e.readPart(part{key: "log", show: sFile})
	for add && e.walOK {
		t, ok := r.uvarint32()
		if !ok {
			e.walOK = false
			break
		}
		if t == 1 {
			break
		}
		if t != 2 {
			e.walOK = false
			break
		}
		e.walOK = e.readPart(part{key: "synced-size", show: sNum})
	}
	return name
}

// newFile reads a new-file entry of any of the five encodings.
func (e *editReader) newFile(tag uint64) bool {
	ok := e.readPart(part{key: "level", show: sLevel, pos: true}) && e.readPart(part{key: "file", show: sFile, pos: true})
	if ok && tag == tagNewFile3 {
		ok = e.readPart(part{key: "path-id", show: sNum})
	}
	ok = ok && e.readPart(part{key: "size", show: sNum})
	if !ok {
		return false
	}
	if tag != tagNewFile5 {
		ok = e.readPart(part{key: "smallest", show: sIKey}) && e.readPart(part{key: "largest", show: sIKey})
	} else {
		// Pebble: a marker byte says whether point-key bounds come first
		// (bit 0) and which bounds are the table's overall ones (bits 1, 2).
		m, mok := e.r.fixed(1)
		if !mok {
			return false
		}
		e.f.add(part{key: "bounds", show: sNum, num: uint64(m[0])})
		if m[0]&1 != 0 && !(e.readPart(part{key: "smallest", show: sIKey}) && e.readPart(part{key: "largest", show: sIKey})) {
			return false
		}
		ok = e.readPart(part{key: "range-smallest", show: sIKey}) && e.readPart(part{key: "range-largest", show: sIKey})
	}
	if ok && tag != tagNewFile {
		lo, ok1 := e.r.uvarint()
		hi, ok2 := e.r.uvarint()
		if ok = ok1 && ok2; ok {
			e.f.add(part{key: "seqs", show: sSeqs, num: lo, num2: hi})
		}
	}
	if ok && (tag == tagNewFile4 || tag == tagNewFile5) {
		ok = e.customs(true)
	}
	return ok
}

// customNames names the custom fields and how their bytes show.
var customNames = sync.OnceValue(func() map[uint64]customField {
	return map[uint64]customField{
		2:  {"need-compaction", sNum, false},
		3:  {"min-log-to-keep", sFile, true}, // 8 little-endian bytes
		4:  {"oldest-blob-file", sFile, true},
		5:  {"oldest-ancester-time", sTime, true},
		6:  {"creation-time", sTime, false},
		7:  {"checksum", sHex, true},
		8:  {"checksum-func", sText, true},
		9:  {"temperature", sNum, true},
		10: {"min-ts", sHex, true},
		11: {"max-ts", sHex, true},
		12: {"unique-id", sHex, true},
		13: {"epoch", sNum, true},
		14: {"compensated-range-deletion-size", sNum, true},
		15: {"tail-size", sNum, true},
		16: {"ts-persisted", sNum, true},
		65: {"path-id", sNum, false},
		67: {"synthetic-prefix", sText, false},
		68: {"synthetic-suffix", sText, false},
	}
})

// customField is how a custom field of a new-file entry shows.
type customField struct {
	name  string
	show  uint8
	rocks bool // only RocksDB writes it
}

// customs reads tagged custom fields up to their terminating tag 1. Each
// is a Varint32 tag and a length-prefixed body, except pebble's
// virtual-backing (66) and blob references (69) in new-file entries
// (withPebble).
func (e *editReader) customs(withPebble bool) bool {
	r := &e.r
	for {
		t, ok := r.uvarint32()
		if !ok {
			return false
		}
		if t == customTerminate {
			return true
		}
		if withPebble && t == customVirtual {
			if !e.readPart(part{key: "virtual-backing", show: sFile}) {
				return false
			}
			continue
		}
		if withPebble && t == customBlobRefs {
			if !e.blobRefs() {
				return false
			}
			continue
		}
		s, ok := r.str()
		if !ok {
			return false
		}
		c, known := customNames()[t]
		e.rocks = e.rocks || c.rocks
		p := part{key: c.name, show: c.show, b: s}
		switch {
		case !known:
			p.key, p.show = "custom-"+strconv.FormatUint(t, 10), sHex
		case t == 3: // a fixed 64-bit number
			if len(s) == 8 {
				p.num, p.b = binary.LittleEndian.Uint64(s), nil
			} else {
				p.show = sRaw
			}
		case c.show == sNum || c.show == sFile || c.show == sTime:
			if v, n := binary.Uvarint(s); n > 0 && n == len(s) {
				p.num, p.b = v, nil
			} else if len(s) > 0 {
				p.show = sRaw
			} else {
				p.show = sText
			}
		}
		e.f.add(p)
	}
}

// blobRefs reads pebble's blob references: depth, count, then per
// reference a blob file id and a value size.
func (e *editReader) blobRefs() bool {
	r := &e.r
	start := r.off
	if !e.readPart(part{key: "blob-depth", show: sNum}) {
		return false
	}
	countAt := r.off
	n, ok := r.uvarint()
	if !ok || n > uint64(r.rest())/2 { // every reference takes >= 2 bytes
		r.off = start
		return false
	}
	for i := uint64(0); i < n; i++ {
		if _, ok := r.uvarint(); !ok {
			return false
		}
		if _, ok := r.uvarint(); !ok {
			return false
		}
	}
	e.f.add(part{key: "blob-refs", show: sRefs, num: n, b: r.b[countAt:r.off]})
	return true
}

// VersionEdit returns the text of VersionEdit rec (see the package
// documentation); nothing when it is not one.
func VersionEdit(rec []byte) []byte {
	out, _ := AppendVersionEdit(make([]byte, 0, 2*len(rec)+64), rec)
	return out
}

// AppendVersionEdit appends the text of VersionEdit rec to dst, one line
// per field. A record that is not a VersionEdit (a *DecodeError says why
// and where) appends nothing.
func AppendVersionEdit(dst, rec []byte) ([]byte, error) {
	w := decode.NewWriter(dst, decode.Output{}, 0)
	err := writeVersionEdit(w, rec)
	return w.B, err
}

// writeVersionEdit writes the lines of VersionEdit rec, or nothing and the
// error of a record that is not one. The record is read twice: first to
// check it and to see whether RocksDB wrote it (which names key kinds),
// then to write it.
func writeVersionEdit(w *decode.Writer, rec []byte) error {
	check := editReader{r: reader{b: rec}}
	for {
		ok, err := check.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	pebbleKinds, rocksKinds := keyKinds()
	kinds := pebbleKinds
	if check.rocks {
		kinds = rocksKinds
	}
	e := editReader{r: reader{b: rec}, f: check.f}
	for {
		if ok, _ := e.next(); !ok {
			return nil
		}
		writeField(w, &e.f, kinds)
	}
}

// writeField writes one field's line.
func writeField(w *decode.Writer, f *field, kinds *[256]string) {
	w.Begin()
	if w.JSON() {
		w.Key("field")
		w.B = decode.AppendJSONString(w.B, f.name)
		for i := range f.parts {
			writePartJSON(w, &f.parts[i], kinds)
		}
	} else {
		w.B = append(w.B, f.name...)
		for i := range f.parts {
			w.B = append(w.B, ' ')
			w.B = appendPart(w.B, &f.parts[i], kinds, i == len(f.parts)-1)
		}
	}
	w.End()
}

// appendPart appends a part's text; last: the last of its line.
func appendPart(dst []byte, p *part, kinds *[256]string, last bool) []byte {
	if !p.pos {
		dst = append(dst, p.key...)
		dst = append(dst, '=')
	}
	switch p.show {
	case sNum:
		return appendUint(dst, p.num)
	case sFile:
		return appendFileNum(dst, p.num)
	case sTime:
		return appendTime(dst, p.num)
	case sLevel:
		dst = append(dst, 'L')
		return appendUint(dst, p.num)
	case sText:
		return appendEscaped(dst, p.b, last)
	case sHex:
		return appendHex(dst, p.b)
	case sRaw:
		dst = append(dst, "raw:"...)
		return appendHex(dst, p.b)
	case sIKey:
		return appendIKey(dst, p.b, kinds)
	case sSeqs:
		dst = appendUint(dst, p.num)
		dst = append(dst, '-')
		return appendUint(dst, p.num2)
	case sRefs:
		eachRef(p.b, func(i int, id, size uint64) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendUint(dst, id)
			dst = append(dst, ':')
			dst = appendUint(dst, size)
		})
	}
	return dst
}

// eachRef calls fn with each blob reference of refs (a count, then per
// reference a blob file id and a value size, checked when read).
func eachRef(refs []byte, fn func(i int, id, size uint64)) {
	r := reader{b: refs}
	n, _ := r.uvarint()
	for i := uint64(0); i < n; i++ {
		id, _ := r.uvarint()
		size, _ := r.uvarint()
		fn(int(i), id, size)
	}
}

// writePartJSON writes a part as a JSON key and value.
func writePartJSON(w *decode.Writer, p *part, kinds *[256]string) {
	w.B = append(w.B, ',', '"')
	for i := 0; i < len(p.key); i++ {
		c := p.key[i]
		if c == '-' {
			c = '_'
		}
		w.B = append(w.B, c)
	}
	w.B = append(w.B, '"', ':')
	switch p.show {
	case sNum, sFile, sLevel:
		w.B = appendUint(w.B, p.num)
	case sTime:
		w.B = append(w.B, '"')
		w.B = appendTime(w.B, p.num)
		w.B = append(w.B, '"')
	case sText:
		w.B = decode.AppendJSONBytes(w.B, p.b)
	case sHex, sRaw:
		w.B = append(w.B, '"')
		w.B = appendHex(w.B, p.b)
		w.B = append(w.B, '"')
	case sIKey:
		w.B = appendIKeyJSON(w.B, p.b, kinds)
	case sSeqs:
		w.B = append(w.B, `{"smallest":`...)
		w.B = appendUint(w.B, p.num)
		w.B = append(w.B, `,"largest":`...)
		w.B = appendUint(w.B, p.num2)
		w.B = append(w.B, '}')
	case sRefs:
		w.B = append(w.B, '[')
		eachRef(p.b, func(i int, id, size uint64) {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.B = append(w.B, `{"id":`...)
			w.B = appendUint(w.B, id)
			w.B = append(w.B, `,"size":`...)
			w.B = appendUint(w.B, size)
			w.B = append(w.B, '}')
		})
		w.B = append(w.B, ']')
	}
}

// appendFileNum appends a file number as its file is named: at least six
// digits, zero-padded.
func appendFileNum(dst []byte, v uint64) []byte { return decode.AppendPadded(dst, v, 6) }

// appendIKey shows an internal key: user key, then the 8-byte trailer as
// #SEQ,KIND with the kind's name (its number when it has none); a key too
// short for a trailer shows as its bytes and #short. The user key escapes
// spaces and "#" needs no escape: the trailer follows the last one.
func appendIKey(dst, k []byte, kinds *[256]string) []byte {
	if len(k) < 8 {
		dst = appendEscaped(dst, k, false)
		return append(dst, "#short"...)
	}
	n := len(k) - 8
	t := binary.LittleEndian.Uint64(k[n:])
	dst = appendEscaped(dst, k[:n], false)
	dst = append(dst, '#')
	dst = appendUint(dst, t>>8)
	dst = append(dst, ',')
	return appendKind(dst, uint8(t), kinds)
}

// appendIKeyJSON writes an internal key as {"user_key":..,"seq":..,"kind":..}.
func appendIKeyJSON(dst, k []byte, kinds *[256]string) []byte {
	dst = append(dst, `{"user_key":`...)
	if len(k) < 8 {
		dst = decode.AppendJSONBytes(dst, k)
		return append(dst, `,"short":true}`...)
	}
	n := len(k) - 8
	t := binary.LittleEndian.Uint64(k[n:])
	dst = decode.AppendJSONBytes(dst, k[:n])
	dst = append(dst, `,"seq":`...)
	dst = appendUint(dst, t>>8)
	dst = append(dst, `,"kind":"`...)
	dst = appendKind(dst, uint8(t), kinds)
	return append(dst, `"}`...)
}

// appendKind appends a key kind's name, or its number.
func appendKind(dst []byte, k uint8, kinds *[256]string) []byte {
	if kinds[k] != "" {
		return append(dst, kinds[k]...)
	}
	return appendUint(dst, uint64(k))
}

// Names of key kinds: pebble's (internal/base) and RocksDB's
// (db/dbformat.h ValueType), which agree below 16.
var keyKinds = sync.OnceValues(func() (p, r *[256]string) {
	p, r = new([256]string), new([256]string)
	for k, n := range map[int]string{0: "DEL", 1: "SET", 2: "MERGE", 3: "LOGDATA", 7: "SINGLEDEL", 15: "RANGEDEL"} {
		p[k], r[k] = n, n
	}
	for k, n := range map[int]string{17: "SEPARATOR", 18: "SETWITHDEL", 19: "RANGEKEYDEL", 20: "RANGEKEYUNSET",
		21: "RANGEKEYSET", 22: "INGESTSST", 23: "DELSIZED", 24: "EXCISE", 191: "INVALID"} {
		p[k] = n
	}
	for k, n := range map[int]string{16: "CFBLOBINDEX", 17: "BLOBINDEX", 20: "DELWITHTS", 22: "ENTITY",
		24: "VALUEPREFSEQNO", 0x7f: "MAX"} {
		r[k] = n
	}
	return p, r
})

// appendTime appends seconds since 1970 as an RFC 3339 time in UTC, or 0.
func appendTime(dst []byte, v uint64) []byte {
	if v == 0 || v > 1<<40 {
		return appendUint(dst, v)
	}
	return unixTime(int64(v)).AppendFormat(dst, rfc3339)
}

const rfc3339 = time.RFC3339

// unixTime is the UTC time of seconds since 1970.
func unixTime(sec int64) time.Time { return time.Unix(sec, 0).UTC() }
