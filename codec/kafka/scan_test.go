package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestScanCodecs: batches of every codec (snappy raw and xerial-framed)
// read back record for record, with small and default windows, from a
// plain reader and from one that hands out slices.
func TestScanCodecs(t *testing.T) {
	t.Parallel()
	for _, c := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			sg := v2Segment(t, []int{1, 7, 0, 30, 2}, c)
			for _, w := range []int{0, 130, 1000} {
				got, s := scanAll(t, sg.file, Options{Window: w})
				if s.Err() != nil || len(s.Damage()) != 0 {
					t.Fatalf("window %d: err %v, damage %v", w, s.Err(), s.Damage())
				}
				wantRecords(t, sg, got, nil)
				in := s.Info()
				if in.Batches != 5 || in.Records != 40 || in.Codecs[c] != 5 || in.FirstOffset != 100 || in.LastOffset != 140 ||
					in.LastEnd != int64(len(sg.file)) || in.Next != int64(len(sg.file)) {
					t.Fatalf("window %d: info %+v", w, in)
				}
				if len(in.Producers) != 2 || in.Producers[0] != 7 || in.Producers[1] != 8 {
					t.Errorf("producers %v, want [7 8]", in.Producers)
				}
			}
		})
	}
}

// TestScanMixedCodecs: one segment whose batches use every codec in turn.
func TestScanMixedCodecs(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{3, 4, 5, 6, 7, 8, 9, 10}, None, Gzip, Snappy, LZ4, Zstd)
	got, s := scanAll(t, sg.file, Options{})
	if s.Err() != nil || len(s.Damage()) != 0 {
		t.Fatal(s.Err(), s.Damage())
	}
	wantRecords(t, sg, got, nil)
}

// v1Set returns a v0/v1 message set: plain messages, then a wrapper of
// each codec holding inner messages, as a broker stores them (v1 inner
// offsets relative, the wrapper carrying the last absolute one; v0 inner
// offsets absolute).
func v1Set(t testing.TB, magic int8, logAppend bool) segment {
	var sg segment
	off := int64(0)
	ts := int64(1600000000000)
	for i := range 3 {
		k := fmt.Appendf(nil, "k%d", i)
		if i == 1 {
			k = nil
		}
		v := fmt.Appendf(nil, "plain %d", i)
		m := codectest.KafkaMessage(magic, off, 0, ts+int64(i), k, v)
		sg.batches = append(sg.batches, Batch{Off: int64(len(sg.file)), Len: int64(len(m)), Magic: magic})
		wts := ts + int64(i)
		if magic == 0 {
			wts = -1
		}
		sg.recs = append(sg.recs, []record{{offset: off, ts: wts, key: k, value: v}})
		sg.file = append(sg.file, m...)
		off++
	}
	for _, c := range []Compression{Gzip, Snappy, LZ4} {
		var inner []byte
		var recs []record
		n := 4
		for j := range n {
			io := int64(j)
			if magic == 0 {
				io = off + int64(j)
			}
			v := fmt.Appendf(nil, "inner %d of %v", j, c)
			inner = append(inner, codectest.KafkaMessage(magic, io, 0, ts+100+int64(j), []byte("ik"), v)...)
			its := ts + 100 + int64(j)
			switch {
			case magic == 0:
				its = -1
			case logAppend:
				its = ts + 999
			}
			recs = append(recs, record{offset: off + int64(j), ts: its, key: []byte("ik"), value: v})
		}
		attr := int8(c)
		if logAppend {
			attr |= attrLogAppendTime
		}
		w := codectest.KafkaMessage(magic, off+int64(n)-1, attr, ts+999, nil, compressor(t, c, true)(inner))
		sg.batches = append(sg.batches, Batch{Off: int64(len(sg.file)), Len: int64(len(w)), Magic: magic})
		sg.recs = append(sg.recs, recs)
		sg.file = append(sg.file, w...)
		off += int64(n)
	}
	return sg
}

// TestScanMessageSets: v0 and v1 message sets, plain and compressed, and
// v2 batches after them in the same segment (a topic whose message format
// was upgraded).
func TestScanMessageSets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		magic     int8
		logAppend bool
	}{{0, false}, {1, false}, {1, true}} {
		t.Run(fmt.Sprintf("v%d-logappend=%v", tc.magic, tc.logAppend), func(t *testing.T) {
			t.Parallel()
			sg := v1Set(t, tc.magic, tc.logAppend)
			got, s := scanAll(t, sg.file, Options{Window: 200})
			if s.Err() != nil || len(s.Damage()) != 0 {
				t.Fatal(s.Err(), s.Damage())
			}
			wantRecords(t, sg, got, nil)
			if in := s.Info(); in.Magic[tc.magic] != 6 || in.Records != 15 || in.LastOffset != 14 {
				t.Fatalf("info %+v", in)
			}
			// v2 batches go on after the message set.
			v2 := v2Segment(t, []int{2, 3}, Zstd)
			file := append(append([]byte(nil), sg.file...), v2.file...)
			got, s = scanAll(t, file, Options{})
			if s.Err() != nil || len(s.Damage()) != 0 || len(got) != 20 || got[15].Offset != 100 {
				t.Fatalf("mixed: %d records, err %v, damage %v", len(got), s.Err(), s.Damage())
			}
		})
	}
}

// TestScanControl: a transaction's data batch, its commit marker and an
// aborted one's marker are yielded with their batches, and counted.
func TestScanControl(t *testing.T) {
	t.Parallel()
	marker := func(off int64, typ byte) []byte {
		return codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Attr: attrTransactional | attrControl, ProducerID: 42,
			Records: []codectest.KafkaRecord{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 5}}}})
	}
	data := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Attr: attrTransactional, ProducerID: 42,
		Records: testRecords(0, 3)})
	file := append(append(append([]byte(nil), data...), marker(3, 1)...), marker(4, 0)...)
	got, s := scanAll(t, file, Options{})
	if s.Err() != nil || len(got) != 5 {
		t.Fatalf("%d records, err %v", len(got), s.Err())
	}
	if got[2].batch.Control() || !got[3].batch.Control() || !got[4].batch.Control() || got[3].Offset != 3 {
		t.Fatalf("control flags wrong: %+v", got)
	}
	if ParseControlType(got[3].key) != ControlCommit || ParseControlType(got[4].key) != ControlAbort {
		t.Errorf("control types %v %v", ParseControlType(got[3].key), ParseControlType(got[4].key))
	}
	in := s.Info()
	if in.ControlBatches != 2 || in.ControlRecords != 2 || in.Commits != 1 || in.Aborts != 1 || in.TransactionalBatches != 3 {
		t.Fatalf("info %+v", in)
	}
}

// corruptCase damages a segment of five batches.
type corruptCase struct {
	name   string
	damage func(sg segment) []byte
	keep   []int            // batches whose records survive
	kind   codec.DamageKind // kind of the (first) damage
	err    error
}

// TestScanDamage: damaged batches are skipped up to the next batch that
// verifies, reported with their kind; a batch cut short at the end is the
// truncation kind; every other batch survives whole.
func TestScanDamage(t *testing.T) {
	t.Parallel()
	flip := func(sg segment, b int, at int64) []byte {
		f := bytes.Clone(sg.file)
		f[sg.batches[b].Off+at] ^= 0x40
		return f
	}
	cases := []corruptCase{
		{"crc-payload", func(sg segment) []byte { return flip(sg, 2, 80) }, []int{0, 1, 3, 4}, codec.DamageChecksum, codec.ErrCorrupt},
		{"crc-field", func(sg segment) []byte { return flip(sg, 0, 18) }, []int{1, 2, 3, 4}, codec.DamageChecksum, codec.ErrCorrupt},
		{"length-huge", func(sg segment) []byte {
			f := bytes.Clone(sg.file)
			f[sg.batches[1].Off+8] = 0x7f
			return f
		}, []int{0, 2, 3, 4}, codec.DamageLength, codec.ErrCorrupt},
		{"length-short", func(sg segment) []byte { return flip(sg, 3, 11) }, []int{0, 1, 2, 4}, codec.DamageChecksum, codec.ErrCorrupt},
		{"magic", func(sg segment) []byte {
			f := bytes.Clone(sg.file)
			f[sg.batches[2].Off+16] = 9
			return f
		}, []int{0, 1, 3, 4}, codec.DamageType, codec.ErrCorrupt},
		{"torn-tail", func(sg segment) []byte { return sg.file[:sg.batches[4].Off+100] }, []int{0, 1, 2, 3}, codec.DamageTruncChunk, codec.ErrTruncated},
		{"torn-header", func(sg segment) []byte { return sg.file[:sg.batches[4].Off+30] }, []int{0, 1, 2, 3}, codec.DamageTruncHdr, codec.ErrTruncated},
		{"torn-offset", func(sg segment) []byte { return sg.file[:sg.batches[4].Off+5] }, []int{0, 1, 2, 3}, codec.DamageTruncHdr, codec.ErrTruncated},
		{"zero-tail", func(sg segment) []byte { return append(bytes.Clone(sg.file), make([]byte, 5000)...) }, []int{0, 1, 2, 3, 4}, codec.DamageTruncHdr, codec.ErrTruncated},
		{"garbage-between", func(sg segment) []byte {
			f := append([]byte(nil), sg.file[:sg.batches[2].Off]...)
			f = append(f, bytes.Repeat([]byte{2, 0, 0, 0, 7}, 300)...)
			return append(f, sg.file[sg.batches[2].Off:]...)
		}, []int{0, 1, 2, 3, 4}, codec.DamageOther, codec.ErrCorrupt},
	}
	for _, c := range []Compression{None, Zstd, Gzip} {
		for _, tc := range cases {
			t.Run(c.String()+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				sg := v2Segment(t, []int{5, 6, 7, 8, 9}, c)
				file := tc.damage(sg)
				got, s := scanAll(t, file, Options{Window: 150})
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
				wantRecords(t, sg, got, tc.keep)
				dmg := s.Damage()
				if len(dmg) != 1 || dmg[0].Kind != tc.kind || !errors.Is(dmg[0], tc.err) {
					t.Fatalf("damage %+v, want one of kind %v (%v)", dmg, tc.kind, tc.err)
				}
				tileCheck(t, file, got, dmg)
				strict := NewScanner(bytes.NewReader(file), int64(len(file)), Options{Strict: true})
				for strict.Next() {
				}
				var ce *codec.CorruptError
				if !errors.As(strict.Err(), &ce) || ce.Off != dmg[0].Off {
					t.Fatalf("strict: %v, want a CorruptError at %d", strict.Err(), dmg[0].Off)
				}
			})
		}
	}
}

// tileCheck checks that the batches of got and the damage cover file
// exactly, in order.
func tileCheck(t *testing.T, file []byte, got []scanned, dmg []codec.Damage) {
	t.Helper()
	pos, di := int64(0), 0
	var last int64 = -1
	for _, g := range got {
		if g.batch.Off == last {
			continue
		}
		for di < len(dmg) && dmg[di].Off == pos {
			pos += dmg[di].Len
			di++
		}
		if g.batch.Off != pos {
			t.Fatalf("batch at %d, scan position %d", g.batch.Off, pos)
		}
		pos, last = g.batch.End(), g.batch.Off
	}
	for ; di < len(dmg); di++ {
		if dmg[di].Off != pos || dmg[di].Len <= 0 {
			t.Fatalf("damage %+v at scan position %d", dmg[di], pos)
		}
		pos += dmg[di].Len
	}
	if pos != int64(len(file)) {
		t.Fatalf("batches and damage cover %d of %d bytes", pos, len(file))
	}
}

// TestScanOutOfOrder: batches that verify but whose offset fields (outside
// the checksum) do not follow are kept, as their bytes say, and counted;
// a batch whose base offset was damaged into a jump does not make the
// batches after it go out of order.
func TestScanOutOfOrder(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{3, 4, 5, 6}, None)
	dup := append(bytes.Clone(sg.file), sg.file[sg.batches[1].Off:sg.batches[2].Off]...)
	got, s := scanAll(t, dup, Options{})
	if len(got) != 22 || len(s.Damage()) != 0 || s.Info().OutOfOrder != 1 || got[18].Offset != 103 {
		t.Fatalf("duplicate batch: %d records, damage %v, info %+v", len(got), s.Damage(), s.Info())
	}
	jump := bytes.Clone(sg.file)
	jump[sg.batches[1].Off+1] ^= 0x10 // base offset += 2^52
	got, s = scanAll(t, jump, Options{})
	if len(got) != 18 || len(s.Damage()) != 0 || s.Info().OutOfOrder != 1 || got[3].Offset != 103+1<<52 || got[7].Offset != 107 {
		t.Fatalf("jump: %d records, damage %v, info %+v", len(got), s.Damage(), s.Info())
	}
}

// TestScanRecordsDoNotParse: batches whose checksum verifies but whose
// records contradict their header (a writer's bug, or a crafted file) are
// damage, and their records are not yielded.
func TestScanRecordsDoNotParse(t *testing.T) {
	t.Parallel()
	good := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Records: testRecords(0, 2)})
	for _, tc := range []struct {
		name string
		spec codectest.KafkaBatchSpec
		edit func([]byte) []byte
		why  string
	}{
		{"count-high", codectest.KafkaBatchSpec{BaseOffset: 10, Records: testRecords(1, 3), LastOffsetDelta: 9}, func(b []byte) []byte {
			b[60] = 4
			return b
		}, ReasonRecords},
		{"count-low", codectest.KafkaBatchSpec{BaseOffset: 10, Records: testRecords(1, 3)}, func(b []byte) []byte {
			b[60] = 2
			return b
		}, ReasonCount},
		{"offset-past-last", codectest.KafkaBatchSpec{BaseOffset: 10, Records: testRecords(1, 3), LastOffsetDelta: 1}, nil, ReasonCount},
		{"duplicate-offsets", codectest.KafkaBatchSpec{BaseOffset: 10, Records: []codectest.KafkaRecord{{OffsetDelta: 1}, {OffsetDelta: 1}}}, nil, ReasonRecords},
		{"gzip-garbage", codectest.KafkaBatchSpec{BaseOffset: 10, Attr: int16(Gzip), Records: testRecords(1, 3),
			Compress: func([]byte) []byte { return []byte("not gzip at all") }}, nil, ReasonDecompress},
		{"codec-7", codectest.KafkaBatchSpec{BaseOffset: 10, Attr: 7, Records: testRecords(1, 3)}, nil, ReasonAttributes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := codectest.KafkaBatch(tc.spec)
			if tc.edit != nil {
				b = refreshCRC(tc.edit(b))
			}
			file := append(append(bytes.Clone(good), b...), codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 100, Records: testRecords(2, 1)})...)
			got, s := scanAll(t, file, Options{})
			if len(got) != 3 || got[2].Offset != 100 {
				t.Fatalf("%d records, want the 2 before and the 1 after", len(got))
			}
			if d := s.Damage(); len(d) != 1 || d[0].Reason != tc.why || d[0].Off != int64(len(good)) || d[0].Len != int64(len(b)) {
				t.Fatalf("damage %+v, want %q over [%d, +%d)", d, tc.why, len(good), len(b))
			}
		})
	}
}

// refreshCRC recomputes the CRC of the v2 batch b after an edit.
func refreshCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[v2crcFrom:], castagnoli))
	return b
}

// TestScanGrown: a scan from the LastEnd of an earlier scan of a file that
// has grown since yields only the new batches, and the torn batch the
// earlier scan saw is whole now.
func TestScanGrown(t *testing.T) {
	t.Parallel()
	sg := v2Segment(t, []int{4, 5, 6}, Snappy)
	part := sg.file[:sg.batches[2].Off+20]
	first, s1 := scanAll(t, part, Options{})
	if len(first) != 9 || len(s1.Damage()) != 1 || s1.Damage()[0].Kind != codec.DamageTruncHdr {
		t.Fatalf("before growing: %d records, damage %+v", len(first), s1.Damage())
	}
	in := s1.Info()
	rest, s2 := scanAll(t, sg.file, Options{Start: in.LastEnd, Prev: in.LastOffset})
	if s2.Err() != nil || len(s2.Damage()) != 0 {
		t.Fatal(s2.Err(), s2.Damage())
	}
	wantRecords(t, sg, append(first, rest...), nil)
	// Offsets that do not go on after Prev are out of order, not damage.
	rest, s3 := scanAll(t, sg.file, Options{Start: in.LastEnd, Prev: 1 << 40})
	if len(rest) != 6 || len(s3.Damage()) != 0 || s3.Info().OutOfOrder != 1 {
		t.Fatalf("%d records, damage %+v, info %+v; want the batch, out of order", len(rest), s3.Damage(), s3.Info())
	}
}

// TestScanEmpty: an empty file and an empty batch (all records compacted
// away) yield no records and no damage.
func TestScanEmpty(t *testing.T) {
	t.Parallel()
	if got, s := scanAll(t, nil, Options{}); len(got) != 0 || s.Err() != nil || len(s.Damage()) != 0 {
		t.Fatalf("empty file: %d records, %v, %v", len(got), s.Err(), s.Damage())
	}
	b := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 5, LastOffsetDelta: 3})
	got, s := scanAll(t, b, Options{})
	if len(got) != 0 || s.Err() != nil || len(s.Damage()) != 0 || s.Info().Batches != 1 || s.Info().LastOffset != 8 {
		t.Fatalf("empty batch: %d records, %v, %v, %+v", len(got), s.Err(), s.Damage(), s.Info())
	}
}
