package leveldb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestLogUnknownChunkType pins what the scanner does with a chunk whose type
// no flavour defines, against leveldb C++'s log_reader.cc (spec 6.6): the
// checksum is verified first; a valid chunk is reported as "unknown record
// type" and skipped alone, parsing continues with the next chunk of the same
// block, and a record in progress is dropped. goleveldb drops the rest of
// the block instead and pebble v2 stops (test/interop checks both).
func TestLogUnknownChunkType(t *testing.T) {
	t.Parallel()
	a, c, d := codectest.VectorPayload(0, 50), codectest.VectorPayload(1, 60), codectest.VectorPayload(2, 70)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	unk := logChunkBytes(0x40, codectest.VectorPayload(3, 20))
	badCRC := bytes.Clone(unk)
	badCRC[7] ^= 1
	zeroType := logChunkBytes(0, codectest.VectorPayload(4, 9)) // type 0 with a length: unknown to leveldb C++ too
	first, last := logChunkBytes(2, a[:20]), logChunkBytes(4, a[20:])
	type dmg struct {
		off, len int64
		reason   string
	}
	off := func(parts ...[]byte) int64 { return int64(len(cat(parts...))) }
	full := func(p []byte) []byte { return logChunkBytes(1, p) }
	cases := []struct {
		name   string
		data   []byte
		recs   [][]byte
		damage []dmg
	}{
		{"between-records", cat(full(a), unk, full(c), full(d)), [][]byte{a, c, d},
			[]dmg{{off(full(a)), int64(len(unk)), logReasonType}}},
		{"first-chunk", cat(unk, full(c)), [][]byte{c}, []dmg{{0, int64(len(unk)), logReasonType}}},
		{"last-in-file", cat(full(a), unk), [][]byte{a}, []dmg{{off(full(a)), int64(len(unk)), logReasonType}}},
		{"two-in-a-row", cat(full(a), unk, unk, full(c)), [][]byte{a, c},
			[]dmg{{off(full(a)), 2 * int64(len(unk)), logReasonType}}},
		{"type-zero-with-length", cat(full(a), zeroType, full(c)), [][]byte{a, c},
			[]dmg{{off(full(a)), int64(len(zeroType)), logReasonType}}},
		{"inside-a-record", cat(first, unk, last, full(c)), [][]byte{c}, []dmg{
			{0, int64(len(first)), logReasonCutShort},
			{off(first), int64(len(unk)), logReasonType},
			{off(first, unk), int64(len(last)), logReasonOrphan}}},
		{"bad-checksum-drops-block", cat(full(a), badCRC, full(c)), [][]byte{a},
			[]dmg{{off(full(a)), int64(len(badCRC) + len(full(c))), logReasonChecksum}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, s := logScanAll(t, tc.data, Options{})
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			var gotP [][]byte
			for _, r := range got {
				gotP = append(gotP, logReadWhole(t, tc.data, r))
			}
			if fmt.Sprint(gotP) != fmt.Sprint(tc.recs) {
				t.Errorf("records %d, want %d", len(gotP), len(tc.recs))
			}
			var gd []dmg
			for _, x := range s.Damage() {
				gd = append(gd, dmg{x.Off, x.Len, x.Reason})
				if !errors.Is(x, codec.ErrCorrupt) {
					t.Errorf("%v is not ErrCorrupt", x)
				}
			}
			if fmt.Sprint(gd) != fmt.Sprint(tc.damage) {
				t.Errorf("damage %v, want %v", gd, tc.damage)
			}
			// Strict mode stops at the first of them.
			_, ss := logScanAll(t, tc.data, Options{Strict: true})
			var ce *codec.CorruptError
			if !errors.As(ss.Err(), &ce) || ce.Off != tc.damage[0].off || ce.Reason != tc.damage[0].reason {
				t.Errorf("strict: %v, want %v", ss.Err(), tc.damage[0])
			}
		})
	}
}

// TestLogUnknownChunkTypeRecyclable checks that a recyclable log's unknown
// chunk (11-byte header with the log's number, as RocksDB writes its
// metadata records) is skipped alone too.
func TestLogUnknownChunkTypeRecyclable(t *testing.T) {
	t.Parallel()
	chunk := logRecycledChunk
	a, c := codectest.VectorPayload(0, 30), codectest.VectorPayload(1, 40)
	unk := chunk(34, 9, codectest.VectorPayload(2, 12))
	data := bytes.Join([][]byte{chunk(5, 9, a), unk, chunk(5, 9, c)}, nil)
	got, s := logScanAll(t, data, Options{})
	ds := s.Damage()
	if len(got) != 2 || !bytes.Equal(logReadWhole(t, data, got[1]), c) ||
		len(ds) != 1 || ds[0].Off != int64(11+len(a)) || ds[0].Len != int64(len(unk)) || ds[0].Reason != logReasonType {
		t.Fatalf("records %v, damage %v", got, ds)
	}
}

// logRecycledChunk builds one recyclable chunk (11-byte header with log
// number num) by hand.
func logRecycledChunk(typ byte, num uint32, p []byte) []byte {
	h := make([]byte, 11, 11+len(p))
	h[6] = typ
	binary.LittleEndian.PutUint32(h[7:], num)
	h = append(h, p...)
	binary.LittleEndian.PutUint32(h, codec.MaskCRC(codec.CRC32C(h[6:])))
	binary.LittleEndian.PutUint16(h[4:], uint16(len(p)))
	return h
}
