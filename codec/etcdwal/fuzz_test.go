package etcdwal

import (
	"bytes"
	"errors"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// FuzzScan: on any bytes the scanner ends; records lie in the file in
// order, each reads back verified, and damage is ordered and inside the
// file.
func FuzzScan(f *testing.F) {
	b, _ := walFile(f, 0, entries(4, 30), 100)
	f.Add(b)
	b, _ = walFile(f, 5, entries(1, 3000), 0)
	f.Add(b[:len(b)-5])
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		sc := NewScanner(r, int64(len(b)), Options{})
		var end int64
		for sc.Next() {
			rec := sc.Record()
			if rec.Off < end || rec.End() > int64(len(b)) || rec.Off%8 != 0 {
				t.Fatalf("record %+v out of order or outside the file", rec)
			}
			end = rec.End()
			if _, err := Read(r, rec, nil); err != nil {
				t.Fatalf("record at %d does not read back: %v", rec.Off, err)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("lenient scan failed: %v", err)
		}
		var dend int64
		for _, d := range sc.Damage() {
			if d.Off < dend || d.Len <= 0 || d.Off+d.Len > int64(len(b)) || !errors.Is(d, codec.ErrCorrupt) && !errors.Is(d, codec.ErrTruncated) {
				t.Fatalf("damage %v out of order or outside the file", d)
			}
			dend = d.Off + d.Len
		}
	})
}

// FuzzRoundTrip: records the writer frames come back as written.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\x00bc"), uint32(0), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, seed uint32, typ uint8) {
		var recs []walRec
		for i := 0; len(data) > 0; i++ {
			n := min(len(data), i*7+1)
			recs = append(recs, walRec{int64(typ%3) + 1, data[:n]})
			data = data[n:]
		}
		b, want := walFile(t, seed, recs, int(seed%300))
		got, _, dmg, err := scanAll(t, b, Options{Strict: true})
		if err != nil || len(dmg) > 0 {
			t.Fatalf("%v %v", dmg, err)
		}
		codectest.SamePayloads(t, "", got, want)
	})
}
