package etcdwal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec"
)

// The record types of etcd's WAL (walpb.Record.type).
const (
	MetadataType = 1 // etcdserverpb.Metadata: node and cluster ID
	EntryType    = 2 // raftpb.Entry
	StateType    = 3 // raftpb.HardState
	CrcType      = 4 // the CRC chain's value, starting a file
	SnapshotType = 5 // walpb.Snapshot: index and term of a snapshot
)

// TypeName returns the name of a record type ("entry", "crc", …), or
// "type(N)".
func TypeName(t int64) string {
	switch t {
	case MetadataType:
		return "metadata"
	case EntryType:
		return "entry"
	case StateType:
		return "state"
	case CrcType:
		return "crc"
	case SnapshotType:
		return "snapshot"
	}
	return fmt.Sprintf("type(%d)", t)
}

// frameHeader is the size of a frame's length field.
const frameHeader = 8

// DefaultMaxRecord bounds the length of one record (etcd's own limit is
// the file's size; its requests are at most a few MiB): a longer frame is
// damage.
const DefaultMaxRecord = 64 << 20

// Options configure a scan.
type Options struct {
	// Strict stops at the first damage: Err then returns a
	// *codec.CorruptError. By default damage is skipped and recorded.
	Strict bool
}

// A Record locates one record of a WAL file.
type Record struct {
	Off  int64  // file offset of the frame's length field
	Len  int64  // bytes of the walpb.Record (the payload)
	Pad  uint8  // zero bytes after it
	Type int64  // the record's type
	Seed uint32 // the chain value its crc continues (a crc record: its own crc)
}

// End returns the offset just past the record's frame.
func (r Record) End() int64 { return r.Off + frameHeader + r.Len + int64(r.Pad) }

// Data returns the offset of the record's payload (its walpb.Record).
func (r Record) Data() int64 { return r.Off + frameHeader }

// A WALRecord is a parsed walpb.Record. Data aliases the parsed bytes.
type WALRecord struct {
	Type int64
	CRC  uint32
	Data []byte
}

// errBadRecord is what ParseRecord returns for bytes that are not a
// walpb.Record.
var errBadRecord = errors.New("not a walpb.Record")

// ParseRecord parses a walpb.Record as etcd's decoder does: fields in any
// order, unknown fields skipped; it fails on bytes that are not well-formed
// protobuf or that lack a type.
func ParseRecord(b []byte) (WALRecord, error) {
	var rec WALRecord
	var typed bool
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return rec, errBadRecord
		}
		b = b[n:]
		switch {
		case num == 1 && wt == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return rec, errBadRecord
			}
			rec.Type, typed, b = int64(v), true, b[n:]
		case num == 2 && wt == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return rec, errBadRecord
			}
			rec.CRC, b = uint32(v), b[n:]
		case num == 3 && wt == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return rec, errBadRecord
			}
			rec.Data, b = v, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, wt, b)
			if n < 0 {
				return rec, errBadRecord
			}
			b = b[n:]
		}
	}
	if !typed {
		return rec, errBadRecord
	}
	return rec, nil
}

// canonical reports whether b is a walpb.Record exactly as etcd's encoder
// writes one: type, crc, then data if any, each once.
func canonical(b []byte) bool {
	for _, want := range []protowire.Number{1, 2} {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 || num != want || wt != protowire.VarintType {
			return false
		}
		if n = protowire.ConsumeFieldValue(num, wt, b[n:]) + n; n <= 1 {
			return false
		}
		b = b[n:]
	}
	if len(b) == 0 {
		return true
	}
	num, wt, n := protowire.ConsumeTag(b)
	return n > 0 && num == 3 && wt == protowire.BytesType && protowire.ConsumeFieldValue(num, wt, b[n:])+n == len(b)
}

// knownType reports whether t is a record type etcd writes.
func knownType(t int64) bool { return t >= MetadataType && t <= SnapshotType }

// frameSize splits a length field into the record's length and its
// padding.
func frameSize(lenField uint64) (n int64, pad uint8) {
	n = int64(lenField &^ (0xff << 56))
	if lenField&(1<<63) != 0 {
		pad = uint8(lenField>>56) & 0x7
	}
	return n, pad
}

// lengthField is the length field of a record of n bytes: padded to a
// multiple of 8.
func lengthField(n int) (uint64, int) {
	pad := (8 - n%8) % 8
	f := uint64(n)
	if pad != 0 {
		f |= uint64(0x80|pad) << 56
	}
	return f, pad
}

// chain returns the crc a record of data continues from seed with.
func chain(seed uint32, data []byte) uint32 { return codec.CRC32CUpdate(seed, data) }

// ReadRecord reads bytes [off, off+len(p)) of rec's payload (its
// walpb.Record) into p, with io.ReaderAt semantics. It reads the whole
// record and verifies it first: its frame, its type and, but for a crc
// record, its crc against rec.Seed. A mismatch is a *codec.CorruptError
// wrapping codec.ErrCorrupt. It is safe for concurrent use.
func ReadRecord(r io.ReaderAt, rec Record, p []byte, off int64) (int, error) {
	want, ok, err := codec.ClipRead(p, off, rec.Len)
	if !ok {
		return 0, err
	}
	b, err := Read(r, rec, nil)
	if err != nil {
		return 0, err
	}
	n := copy(want, b[off:])
	return n, codec.ShortRead(n, len(p))
}

// Read appends rec's payload to dst after verifying it as ReadRecord does.
func Read(r io.ReaderAt, rec Record, dst []byte) ([]byte, error) {
	if rec.Len < 0 || rec.Len > DefaultMaxRecord {
		return dst, corrupt(rec.Off, codec.DamageLength.String(), codec.ErrCorrupt)
	}
	buf := make([]byte, frameHeader+rec.Len)
	if k, err := r.ReadAt(buf, rec.Off); int64(k) < int64(len(buf)) {
		if err == nil || errors.Is(err, io.EOF) {
			return dst, corrupt(rec.Off, codec.DamageTruncChunk.String(), codec.ErrTruncated)
		}
		return dst, err
	}
	if n, pad := frameSize(binary.LittleEndian.Uint64(buf)); n != rec.Len || pad != rec.Pad {
		return dst, corrupt(rec.Off, "frame length changed", codec.ErrCorrupt)
	}
	w, err := ParseRecord(buf[frameHeader:])
	if err != nil || w.Type != rec.Type {
		return dst, corrupt(rec.Off, "record does not parse as it did", codec.ErrCorrupt)
	}
	if w.Type == CrcType {
		if w.CRC != rec.Seed {
			return dst, corrupt(rec.Off, codec.DamageChecksum.String(), codec.ErrCorrupt)
		}
	} else if chain(rec.Seed, w.Data) != w.CRC {
		return dst, corrupt(rec.Off, codec.DamageChecksum.String(), codec.ErrCorrupt)
	}
	return append(dst, buf[frameHeader:]...), nil
}

// corrupt is a *codec.CorruptError of this format.
func corrupt(off int64, reason string, err error) *codec.CorruptError {
	return &codec.CorruptError{Format: codec.EtcdWAL, Off: off, Reason: reason, Err: err}
}

// damage is damage of kind k with the kind's words as its reason.
func damage(off, n int64, k codec.DamageKind, err error) codec.Damage {
	return codec.Damage{Off: off, Len: n, Kind: k, Reason: k.String(), Err: err}
}
