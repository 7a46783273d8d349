package kafka

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// checkScan scans file with a small window and checks what any scan must
// hold: no panic, no error on an in-memory file, batches and damage tiling
// the file in order, every record's parts inside its batch's data as
// ReadBatch returns it, offsets rising, strict mode failing exactly when
// there is damage, and runs (NextRun) yielding what Next yields.
func checkScan(t *testing.T, file []byte, limit int64) {
	r := bytes.NewReader(file)
	size := int64(len(file))
	s := NewScanner(r, size, Options{Window: 130, MaxDecoded: limit})
	pos, di := int64(0), 0
	var at, prevOff int64 = -1, -1
	var data []byte
	for s.Next() {
		b, rec := s.Batch(), s.Record()
		if b.Off != at {
			pos, di = skipGaps(t, file, s.Damage(), pos, di, b.Off)
			if b.Off != pos || b.End() > size {
				t.Fatalf("batch %+v at scan position %d (size %d)", b, pos, size)
			}
			var err error
			if data, err = ReadBatch(r, b.Off, b.Len, nil, limit); err != nil {
				t.Fatalf("ReadBatch of a batch the scan verified: %v", err)
			}
			at, pos = b.Off, b.End()
			prevOff = b.BaseOffset - 1
		}
		if rec.Offset <= prevOff || rec.Offset < b.BaseOffset || rec.Offset > b.LastOffset {
			t.Fatalf("record offset %d after %d in its batch, batch %d..%d", rec.Offset, prevOff, b.BaseOffset, b.LastOffset)
		}
		prevOff = rec.Offset
		n := int64(len(data))
		for _, f := range [][2]int64{{rec.Pos, rec.Len}, {rec.KeyOff, rec.KeyLen}, {rec.ValueOff, rec.ValueLen}} {
			if f[0] < 0 || f[1] < -1 || f[0]+max(f[1], 0) > n {
				t.Fatalf("record %+v outside %d bytes of data", rec, n)
			}
		}
	}
	if s.Err() != nil {
		t.Fatalf("Err on an in-memory file: %v", s.Err())
	}
	pos, di = skipGaps(t, file, s.Damage(), pos, di, size)
	if pos != size || di != len(s.Damage()) {
		t.Fatalf("batches and damage cover %d of %d bytes", pos, size)
	}
	strict := NewScanner(r, size, Options{Strict: true, MaxDecoded: limit})
	for strict.Next() {
	}
	if (strict.Err() != nil) != (len(s.Damage()) > 0) {
		t.Fatalf("strict Err %v with %d damage", strict.Err(), len(s.Damage()))
	}
	// Runs yield what Next yields, whatever the bytes.
	sameRuns(t, file, Options{Window: 130, MaxDecoded: limit})
	sameRuns(t, file, Options{MaxDecoded: limit})
}

// skipGaps moves pos over the damage (from dmg[di]) and the batches
// without records that lie before to, checking that each of those batches
// verifies, and returns the new pos and di.
func skipGaps(t *testing.T, file []byte, dmg []codec.Damage, pos int64, di int, to int64) (int64, int) {
	for pos < to {
		if di < len(dmg) && dmg[di].Off == pos {
			if dmg[di].Len <= 0 {
				t.Fatalf("damage %+v", dmg[di])
			}
			pos += dmg[di].Len
			di++
			continue
		}
		if pos+magicAt >= int64(len(file)) {
			break
		}
		_, n := peekMagic(file[pos:])
		if n <= 0 || pos+n > int64(len(file)) {
			break
		}
		b, err := checkBatch(file[pos:pos+n], pos)
		if err != nil || b.Count != 0 {
			t.Fatalf("bytes at %d are neither damage nor a batch without records (%v, %d records)", pos, err, b.Count)
		}
		pos += n
	}
	return pos, di
}

// FuzzScanner feeds arbitrary bytes to the scanner as a segment.
func FuzzScanner(f *testing.F) {
	f.Add(v2Segment(f, []int{2, 3}, None).file)
	f.Add(v2Segment(f, []int{2, 1}, Gzip, Zstd).file)
	f.Add(v2Segment(f, []int{2}, Snappy, LZ4).file)
	f.Add(v1Set(f, 0, false).file)
	f.Add(v1Set(f, 1, true).file)
	f.Add(codectest.KafkaMessage(1, 3, 0, 5, nil, []byte("v")))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkScan(t, b, 1<<20)
	})
}

// FuzzBatch wraps arbitrary bytes as the records of a batch whose header
// and checksum are right, compressed with the codec the first byte names,
// so that the fuzzer explores record decoding and decompression past the
// checksum.
func FuzzBatch(f *testing.F) {
	for c := range Zstd + 1 {
		recs := codectest.AppendKafkaRecord(nil, codectest.KafkaRecord{Key: []byte("k"), Value: []byte("value"),
			Headers: []codectest.KafkaHeader{{Key: "h", Value: []byte("x")}}}, 0)
		recs = codectest.AppendKafkaRecord(recs, codectest.KafkaRecord{Value: []byte("two"), TimestampDelta: 4}, 1)
		if c != None {
			recs = compressor(f, c, c == Snappy)(recs)
		}
		f.Add(byte(c), uint8(2), recs)
	}
	f.Fuzz(func(t *testing.T, c byte, count uint8, recs []byte) {
		spec := codectest.KafkaBatchSpec{BaseOffset: 7, Attr: int16(c % 8), LastOffsetDelta: int32(count) + 1,
			Compress: func([]byte) []byte { return recs }}
		b := codectest.KafkaBatch(spec)
		binary.BigEndian.PutUint32(b[57:], uint32(count))
		checkScan(t, refreshCRC(b), 1<<20)
	})
}

// FuzzRecordV2Mem: the parser of records in memory (recordV2Mem) agrees
// with the general one reading through a fill function, as over a file,
// on every input and position: the same verdict, and for a record that
// parses the same fields and the same position after it.
func FuzzRecordV2Mem(f *testing.F) {
	rs := []codectest.KafkaRecord{
		{Key: []byte("user-1"), Value: []byte("v"), Headers: []codectest.KafkaHeader{{Key: "trace-id", Value: []byte("tr-1")}}},
		{Value: bytes.Repeat([]byte("x"), 300), TimestampDelta: -70},
		{Key: []byte{}, Headers: []codectest.KafkaHeader{{Key: "h"}}},
	}
	batch := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 10, BaseTimestamp: 1700000000000, Records: rs})
	f.Add(batch[BatchHeaderSize:], int64(10), int64(9), false)
	f.Add(batch[BatchHeaderSize:], int64(10), int64(9), true)
	f.Add([]byte{0x0c, 0, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 1, 1, 0}, int64(0), int64(-1), false)
	f.Add([]byte{0x0e, 0, 0, 2, 1, 1, 0x02, 0}, int64(0), int64(-1), false)
	f.Add([]byte{0x90, 0x01, 0, 0x80, 0x00, 0x80, 0x01, 0, 0xff, 0x7f}, int64(0), int64(-1), false)
	f.Fuzz(func(t *testing.T, data []byte, base, prev int64, logAppend bool) {
		b := Batch{Magic: 2, BaseOffset: base, LastOffset: base + 1<<20, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000999}
		if logAppend {
			b.Attr = attrLogAppendTime
		}
		size := int64(len(data))
		for pos := int64(0); pos <= min(size, 8); pos++ {
			m := over(data)
			m.pos = pos
			fc := cursor{pos: pos, end: size, fill: func(p int64, n int) []byte { return data[p:min(size, p+int64(n))] }}
			var rm, rf Record
			okm, okf := m.recordV2(&b, prev, &rm), fc.recordV2(&b, prev, &rf)
			if okm != okf || okm && (rm != rf || m.pos != fc.pos) {
				t.Fatalf("at %d: in memory %v %+v (next %d), through fill %v %+v (next %d)", pos, okm, rm, m.pos, okf, rf, fc.pos)
			}
		}
	})
}

// TestMemVarint: memVarint reads what binary.Varint reads, at every
// position of every two-byte prefix followed by each kind of third byte
// (the one- and two-byte forms it reads inline, non-minimal ones
// included), and short slices.
func TestMemVarint(t *testing.T) {
	t.Parallel()
	for x := range 1 << 16 {
		for _, c := range []byte{0, 0x01, 0x7f, 0x80, 0xff} {
			d := []byte{byte(x >> 8), byte(x), c}
			for _, n := range []int{1, 2, 3} {
				for i := int64(0); i <= int64(n); i++ {
					v, next, ok := memVarint(d[:n], i)
					wv, k := int64(0), 0
					if i < int64(n) {
						wv, k = binary.Varint(d[i:n])
					}
					if ok != (k > 0) || ok && (v != wv || next != i+int64(k)) {
						t.Fatalf("%x at %d: memVarint %d, %d, %v; binary.Varint %d, %d", d[:n], i, v, next, ok, wv, k)
					}
				}
			}
		}
	}
}
