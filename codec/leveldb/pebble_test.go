package leveldb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// logReseal recomputes the masked checksum of the chunk at off.
func logReseal(b []byte, off int64) {
	hs := int64(logHdrSize(b[off+6]))
	n := int64(binary.LittleEndian.Uint16(b[off+4:]))
	binary.LittleEndian.PutUint32(b[off:], codec.MaskCRC(codec.CRC32C(b[off+6:off+hs+n])))
}

func readLogVector(t *testing.T, name string) []byte {
	b, err := os.ReadFile(codectest.Vector(t, "leveldb/"+name, writeVector))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLogPebble covers the recyclable-log rules of spec section 8 on
// variants of the pebble-recyclable vector (chunks at 0, 1011, 32768, 65536,
// 98304 LAST, 98325, 106336, 106347 FULL, end marker at 106373).
func TestLogPebble(t *testing.T) {
	t.Parallel()
	base := readLogVector(t, "pebble-recyclable.log")
	type want struct {
		nrec    int
		reasons []string
		eof     int64
		end     int64
	}
	cases := []struct {
		name string
		mod  func(b []byte) []byte
		want want
	}{
		{"clean", func(b []byte) []byte { return b }, want{5, nil, 106373, 106373}},
		{"stale-data", func(b []byte) []byte {
			// An intact chunk of log 6 at 98325: the previous life of the
			// file; the log ends there, the rest is a stale tail.
			binary.LittleEndian.PutUint32(b[98325+7:], 6)
			logReseal(b, 98325)
			return b
		}, want{2, []string{logReasonStale}, -1, 98325}},
		{"lognum-flipped", func(b []byte) []byte {
			// The log number changed but the checksum no longer matches:
			// damage, the rest of block 3 (with the end marker) is dropped.
			b[98325+8] ^= 1
			return b
		}, want{2, []string{logReasonChecksum}, -1, 106384}},
		{"marker-mid-record", func(b []byte) []byte {
			copy(b[98304:], []byte{0, 0, 0, 0, 0, 0, 5, 8, 0, 0, 0})
			return b
		}, want{1, []string{logReasonCutShort}, 98304, 98304}},
		{"marker-alone", func([]byte) []byte {
			return []byte{0, 0, 0, 0, 0, 0, 5, 8, 0, 0, 0}
		}, want{0, nil, 0, 0}},
		{"no-marker", func(b []byte) []byte { return b[:106373] }, want{5, nil, -1, 106373}},
		{"wrong-marker", func(b []byte) []byte {
			b[106373+7] = 9 // marker for log 8, not 7+1: a bad chunk
			return b
		}, want{5, []string{logReasonChecksum}, -1, 106384}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.mod(bytes.Clone(base))
			got, s := logScanAll(t, data, Options{})
			var rs []string
			for _, d := range s.Damage() {
				rs = append(rs, d.Reason)
			}
			info := s.Info()
			if len(got) != c.want.nrec || len(rs) != len(c.want.reasons) || info.EOFMarker != c.want.eof || info.End != c.want.end {
				t.Fatalf("%d records, damage %v, info %+v; want %+v", len(got), s.Damage(), info, c.want)
			}
			for i := range rs {
				if rs[i] != c.want.reasons[i] {
					t.Errorf("damage %d: %q, want %q", i, rs[i], c.want.reasons[i])
				}
			}
			if !info.Recyclable || info.LogNum != 7 || info.WALSync {
				t.Errorf("info %+v: want recyclable log 7", info)
			}
			if c.name == "marker-mid-record" && !errors.Is(s.Damage()[0], codec.ErrTruncated) {
				t.Errorf("cut-short record at an end marker should be ErrTruncated")
			}
			for _, r := range got {
				logReadWhole(t, data, r)
			}
		})
	}
}

// TestLogWALSync checks the 19-byte header flavour and its canonical
// layout (chunks fill blocks of 32749 payload bytes).
func TestLogWALSync(t *testing.T) {
	t.Parallel()
	data := readLogVector(t, "pebble-walsync.log")
	got, s := logScanAll(t, data, Options{})
	if len(got) != 3 || len(s.Damage()) != 0 || !s.Info().WALSync || s.Info().LogNum != 7 {
		t.Fatalf("%v %v %+v", got, s.Damage(), s.Info())
	}
	for _, r := range got {
		if r.Hdr != logHdrWALSync || r.Chunks != nil {
			t.Errorf("record %+v", r)
		}
	}
	// Damage the synced-offset field: covered by the checksum.
	bad := bytes.Clone(data)
	bad[got[0].Off+12] ^= 0x10
	got2, s2 := logScanAll(t, bad, Options{})
	if len(got2) >= len(got) || len(s2.Damage()) == 0 || s2.Damage()[0].Reason != logReasonChecksum {
		t.Fatalf("synced offset not checked: %v %v", got2, s2.Damage())
	}
}
