package leveldb

import (
	"bytes"
	"testing"
)

// TestRecordIn: a record read out of a buffer of the file equals ReadRecord's
// reading, for records of one and of many chunks and every header size; a
// record reaching past the buffer or with a flipped byte is refused.
func TestRecordIn(t *testing.T) {
	t.Parallel()
	recs := [][]byte{{}, []byte("one"), bytes.Repeat([]byte("a"), 40000), []byte("after"), bytes.Repeat([]byte("b"), 100000), []byte("end")}
	for _, wo := range []WriterOptions{{}, {Recyclable: true, LogNum: 7}} {
		data, _ := writeLog(t, recs, wo)
		found, _ := logScanAll(t, data, Options{})
		if len(found) != len(recs) {
			t.Fatalf("%+v: %d records, want %d", wo, len(found), len(recs))
		}
		for i, r := range found {
			want := logReadWhole(t, data, r)
			end := RecordEnd(r)
			if end <= r.Off || end > int64(len(data)) {
				t.Fatalf("%+v: record %d: end %d of %d", wo, i, end, len(data))
			}
			// The buffer holds just the record's bytes, at a base.
			got, ok := RecordIn(data[r.Off:end], r.Off, r, nil, Options{})
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("%+v: record %d: %d bytes, ok %v; want %d", wo, i, len(got), ok, len(want))
			}
			if _, ok := RecordIn(data[r.Off:end-1], r.Off, r, nil, Options{}); ok {
				t.Errorf("%+v: record %d: served from a buffer one byte short", wo, i)
			}
			if _, ok := RecordIn(data[r.Off+1:end], r.Off+1, r, nil, Options{}); ok {
				t.Errorf("%+v: record %d: served from a buffer starting past it", wo, i)
			}
			bad := bytes.Clone(data[r.Off:end])
			bad[len(bad)-1] ^= 1
			if r.Len == 0 {
				bad[0] ^= 1 // the checksum
			}
			if _, ok := RecordIn(bad, r.Off, r, nil, Options{}); ok {
				t.Errorf("%+v: record %d: served with a flipped byte", wo, i)
			}
		}
	}
}

// FuzzRecordIn: whatever the bytes, RecordIn agrees with ReadRecord on the
// records a scan finds, and refuses what ReadRecord fails.
func FuzzRecordIn(f *testing.F) {
	addLogSeeds(f, uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, which, cut uint16) {
		recs, _ := logScanAll(t, data, Options{})
		if len(recs) == 0 {
			return
		}
		r := recs[int(which)%len(recs)]
		lo := min(int64(cut), r.Off)
		got, ok := RecordIn(data[r.Off-lo:], r.Off-lo, r, nil, Options{})
		p := make([]byte, r.Len)
		_, err := ReadRecord(bytes.NewReader(data), r, p, 0, Options{})
		if ok != (err == nil) || ok && !bytes.Equal(got, p) {
			t.Fatalf("record at %d: RecordIn ok %v, ReadRecord %v", r.Off, ok, err)
		}
		// A buffer cut short of the record's end never serves it.
		if end := RecordEnd(r); end > r.Off {
			if _, ok := RecordIn(data[r.Off:end-1], r.Off, r, nil, Options{}); ok {
				t.Fatalf("record at %d served from a short buffer", r.Off)
			}
		}
	})
}
