package wlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// FuzzScan: on any bytes the scanner ends, its records lie inside the
// file in order and past one another, its damage too, and every record
// reads back as exactly its size or fails as corrupt (never a panic,
// never more bytes than the size, never past the record limit).
func FuzzScan(f *testing.F) {
	for _, c := range []Compression{None, Snappy, Zstd} {
		f.Add(segment(f, [][]byte{{1, 2, 3}, sized(PageSize+50, 1), {}}, c, false))
	}
	f.Add(rawSegment(zstdFrameClaiming(1<<40), Zstd))
	f.Add(make([]byte, PageSize+3))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		sc := NewScanner(r, int64(len(b)), Options{})
		var end int64
		for sc.Next() {
			rec := sc.Record()
			if rec.Off < end || rec.End() > int64(len(b)) || rec.Size < 0 || rec.Size > DefaultMaxRecord {
				t.Fatalf("record %+v outside the file or before %d", rec, end)
			}
			end = rec.End()
			p, err := Decode(r, rec, nil, Options{})
			if err != nil && !errors.Is(err, codec.ErrCorrupt) {
				t.Fatalf("decode: %v", err)
			}
			if err == nil && int64(len(p)) != rec.Size {
				t.Fatalf("decoded %d bytes of a %d-byte record", len(p), rec.Size)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("lenient scan failed: %v", err)
		}
		var dend int64
		for _, d := range sc.Damage() {
			if d.Off < dend || d.Len <= 0 || d.Off+d.Len > int64(len(b)) {
				t.Fatalf("damage %v out of order or outside the file", d)
			}
			dend = d.Off + d.Len
		}
	})
}

// FuzzRoundTrip: records the writer frames (in any compression) come back
// as written.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("abc"), uint16(3), uint8(0))
	f.Add(sized(PageSize*2, 3), uint16(PageSize-HeaderSize), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, comp uint8) {
		// Split data into records at multiples of cut.
		var recs [][]byte
		step := int(cut)%(3*PageSize) + 1
		for len(data) > 0 {
			n := min(step, len(data))
			recs = append(recs, data[:n])
			data = data[n:]
		}
		c := Compression(comp % 3)
		b := segment(t, recs, c, comp&4 != 0)
		got, _, dmg, err := scanAll(t, b, Options{Strict: true})
		if err != nil || len(dmg) > 0 {
			t.Fatalf("%v, %v", dmg, err)
		}
		codectest.SamePayloads(t, "", got, recs)
	})
}
