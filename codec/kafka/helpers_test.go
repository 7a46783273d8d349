package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/recfs/recfs/codec/codectest"
)

// compressor returns a function compressing records with c; snappy in
// xerial framing when xerial is set.
func compressor(t testing.TB, c Compression, xerial bool) func([]byte) []byte {
	return func(p []byte) []byte {
		var buf bytes.Buffer
		switch c {
		case Gzip:
			w := gzip.NewWriter(&buf)
			w.Write(p)
			w.Close()
		case Snappy:
			if !xerial {
				return s2.EncodeSnappy(nil, p)
			}
			buf.Write(xerialMagic)
			buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
			for len(p) > 0 {
				n := min(len(p), 32<<10)
				blk := s2.EncodeSnappy(nil, p[:n])
				buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
				buf.Write(blk)
				p = p[n:]
			}
		case LZ4:
			w := lz4.NewWriter(&buf)
			w.Write(p)
			w.Close()
		case Zstd:
			e, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			return e.EncodeAll(p, nil)
		default:
			return p
		}
		return buf.Bytes()
	}
}

// testRecords returns n records of batch b: keys, values and headers that
// say which record they are, some null.
func testRecords(b, n int) []codectest.KafkaRecord {
	out := make([]codectest.KafkaRecord, n)
	for i := range out {
		r := codectest.KafkaRecord{
			Key:            fmt.Appendf(nil, "key-%d-%d", b, i),
			Value:          fmt.Appendf(nil, "value %d of batch %d %s", i, b, bytes.Repeat([]byte{'x'}, i%13)),
			TimestampDelta: int64(i * 3),
		}
		switch i % 5 {
		case 1:
			r.Key = nil
		case 2:
			r.Headers = []codectest.KafkaHeader{{Key: "h", Value: []byte("v")}, {Key: "trace", Value: nil}}
		case 3:
			r.Value = nil
		}
		out[i] = r
	}
	return out
}

// segment is a test segment and what it holds.
type segment struct {
	file    []byte
	batches []Batch    // headers as written (offsets in file)
	recs    [][]record // per batch: the records written
}

// record is what a test wrote into a record, with its offset.
type record struct {
	offset     int64
	ts         int64
	key, value []byte
	headers    []codectest.KafkaHeader
}

// v2Segment writes batches of counts[i] records each, compressed with
// codecs[i%len(codecs)], at consecutive offsets.
func v2Segment(t testing.TB, counts []int, codecs ...Compression) segment {
	if len(codecs) == 0 {
		codecs = []Compression{None}
	}
	var sg segment
	off := int64(100)
	for i, n := range counts {
		c := codecs[i%len(codecs)]
		rs := testRecords(i, n)
		spec := codectest.KafkaBatchSpec{BaseOffset: off, Attr: int16(c), BaseTimestamp: 1700000000000 + int64(i)*1000,
			ProducerID: int64(7 + i%2), Records: rs, LeaderEpoch: 3}
		if c != None {
			spec.Compress = compressor(t, c, i%2 == 0)
		}
		b := codectest.KafkaBatch(spec)
		sg.batches = append(sg.batches, Batch{Off: int64(len(sg.file)), Len: int64(len(b)), Magic: 2, BaseOffset: off,
			LastOffset: off + int64(max(n, 1)) - 1})
		var got []record
		for j, r := range rs {
			got = append(got, record{offset: off + int64(j), ts: spec.BaseTimestamp + r.TimestampDelta, key: r.Key, value: r.Value, headers: r.Headers})
		}
		sg.recs = append(sg.recs, got)
		sg.file = append(sg.file, b...)
		off += int64(max(n, 1)) // an empty batch (all compacted away) keeps its offset
	}
	return sg
}

// scanned is one record as a scan yielded it, with its bytes read back.
type scanned struct {
	Record
	batch      Batch
	key, value []byte
	headers    []Header
}

// scanAll scans file and reads back every record's key and value through
// ReadBatch.
func scanAll(t testing.TB, file []byte, o Options) ([]scanned, *Scanner) {
	t.Helper()
	r := bytes.NewReader(file)
	s := NewScanner(r, int64(len(file)), o)
	var out []scanned
	var data []byte
	var at int64 = -1
	for s.Next() {
		b, rec := s.Batch(), s.Record()
		if b.Off != at {
			var err error
			if data, err = ReadBatch(r, b.Off, b.Len, nil, DefaultMaxDecoded); err != nil {
				t.Fatalf("ReadBatch(%d, %d): %v", b.Off, b.Len, err)
			}
			at = b.Off
		}
		hs, err := AppendHeaders(nil, data, rec)
		if err != nil {
			t.Fatalf("headers of %+v: %v", rec, err)
		}
		out = append(out, scanned{Record: rec, batch: b, key: field(data, rec.KeyOff, rec.KeyLen), value: field(data, rec.ValueOff, rec.ValueLen), headers: hs})
	}
	return out, s
}

// field returns data[off:off+n], or nil for n < 0 (null).
func field(data []byte, off, n int64) []byte {
	if n < 0 {
		return nil
	}
	return data[off : off+n]
}

// wantRecords checks that got holds exactly the records of the batches of
// sg named by keep (all when nil), in order.
func wantRecords(t *testing.T, sg segment, got []scanned, keep []int) {
	t.Helper()
	if keep == nil {
		for i := range sg.recs {
			keep = append(keep, i)
		}
	}
	var want []record
	for _, i := range keep {
		want = append(want, sg.recs[i]...)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.offset || g.Timestamp != w.ts || !bytes.Equal(g.key, w.key) || !bytes.Equal(g.value, w.value) ||
			(g.key == nil) != (w.key == nil) || (g.value == nil) != (w.value == nil) || !sameHeaders(g.headers, w.headers) {
			t.Fatalf("record %d: offset %d ts %d key %q value %q headers %d; want offset %d ts %d key %q value %q headers %d",
				i, g.Offset, g.Timestamp, g.key, g.value, g.Headers, w.offset, w.ts, w.key, w.value, len(w.headers))
		}
	}
}

// sameHeaders reports whether the headers read equal those written, null
// values included.
func sameHeaders(got []Header, want []codectest.KafkaHeader) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		g := got[i]
		if string(g.Key) != w.Key || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
			return false
		}
	}
	return true
}

// mkValueBatch returns an uncompressed batch at offset base of one record
// whose value is v.
func mkValueBatch(t testing.TB, base int64, v []byte) []byte {
	return codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: base, Records: []codectest.KafkaRecord{{Value: v}}})
}
