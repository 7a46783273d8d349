package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// allocated returns the bytes f allocates. The process's count is used:
// the tests that measure do not run in parallel with others (top-level
// tests without t.Parallel run before the parallel ones resume).
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestHostileCounts: record counts of 2^31-1 and 2^31 (negative as an
// int32), in plain and compressed batches, cost no memory by the count and
// are damage; the batch after them survives.
func TestHostileCounts(t *testing.T) {
	after := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 1 << 31, Records: testRecords(1, 2)})
	for _, tc := range []struct {
		name  string
		count uint32
		c     Compression
	}{{"max-plain", 1<<31 - 1, None}, {"max-zstd", 1<<31 - 1, Zstd}, {"2^31-plain", 1 << 31, None}, {"2^31-gzip", 1 << 31, Gzip}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := codectest.KafkaBatchSpec{BaseOffset: 0, Attr: int16(tc.c), Records: testRecords(0, 3), LastOffsetDelta: 1<<31 - 1}
			if tc.c != None {
				spec.Compress = compressor(t, tc.c, false)
			}
			b := codectest.KafkaBatch(spec)
			binary.BigEndian.PutUint32(b[57:], tc.count)
			file := append(refreshCRC(b), after...)
			var got []scanned
			var s *Scanner
			n := allocated(func() { got, s = scanAll(t, file, Options{}) })
			if len(got) != 2 || got[0].Offset != 1<<31 {
				t.Fatalf("%d records, want the 2 of the batch after", len(got))
			}
			if d := s.Damage(); len(d) != 1 || d[0].Len != int64(len(b)) {
				t.Fatalf("damage %+v", d)
			}
			if n > 16<<20 {
				t.Fatalf("scan allocated %d bytes", n)
			}
		})
	}
}

// TestHostileLengths: length fields that claim up to 2 GiB (batch, key,
// value, header count, record length) are damage, never allocations of
// that size; a batch length past the end of the file with nothing valid
// after it is a torn tail.
func TestHostileLengths(t *testing.T) {
	good := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Records: testRecords(0, 2)})
	mk := func(rec []byte, count uint32) []byte {
		b := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 10, Records: []codectest.KafkaRecord{{Value: []byte("x")}}})
		b = append(b[:BatchHeaderSize], rec...)
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-LogHeaderSize))
		binary.BigEndian.PutUint32(b[57:], count)
		return refreshCRC(b)
	}
	huge := binary.AppendVarint(nil, 1<<31-1)
	for _, tc := range []struct {
		name string
		bad  []byte
		kind codec.DamageKind
	}{
		{"record-length", mk(append(bytes.Clone(huge), 0, 0, 0, 1, 1, 0), 1), codec.DamageOther},
		{"key-length", mk(append(binary.AppendVarint(nil, 10), append([]byte{0, 0, 0}, append(huge, 1, 1, 0)...)...), 1), codec.DamageOther},
		{"value-length", mk(append(binary.AppendVarint(nil, 10), append([]byte{0, 0, 0, 1}, append(huge, 0)...)...), 1), codec.DamageOther},
		{"header-count", mk(append(binary.AppendVarint(nil, 10), append([]byte{0, 0, 0, 1, 1}, huge...)...), 1), codec.DamageOther},
		{"varint-overlong", mk(append(binary.AppendVarint(nil, 12), bytes.Repeat([]byte{0xff}, 12)...), 1), codec.DamageOther},
		{"negative-batch-length", func() []byte {
			b := mk(nil, 0)
			binary.BigEndian.PutUint32(b[8:], 0xfffffff0)
			return b
		}(), codec.DamageLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := append(append(bytes.Clone(good), tc.bad...), codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 20, Records: testRecords(1, 1)})...)
			var got []scanned
			var s *Scanner
			n := allocated(func() { got, s = scanAll(t, file, Options{}) })
			if len(got) != 3 || got[2].Offset != 20 {
				t.Fatalf("%d records, want 2 + 1", len(got))
			}
			if d := s.Damage(); len(d) != 1 || d[0].Kind != tc.kind || d[0].Off != int64(len(good)) {
				t.Fatalf("damage %+v, want kind %v at %d", d, tc.kind, len(good))
			}
			if n > 16<<20 {
				t.Fatalf("scan allocated %d bytes", n)
			}
		})
	}
	t.Run("torn-2GiB", func(t *testing.T) {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[8:], 1<<31-1)
		file := append(bytes.Clone(good), b...)
		_, s := scanAll(t, file, Options{})
		if d := s.Damage(); len(d) != 1 || d[0].Kind != codec.DamageTruncChunk || !errors.Is(d[0], codec.ErrTruncated) {
			t.Fatalf("damage %+v, want a torn tail", d)
		}
	})
}

// TestCompressionBombs: batches of every codec that decompress to 16 MiB
// are damage of the limit kind under a 1 MiB MaxDecoded, found without
// allocating much more than the limit, and the batch after each survives.
func TestCompressionBombs(t *testing.T) {
	zeros := make([]byte, 16<<20)
	for _, c := range []Compression{Gzip, Snappy, LZ4, Zstd} {
		for _, xerial := range []bool{false, true} {
			if xerial && c != Snappy {
				continue
			}
			name := c.String()
			if xerial {
				name += "-xerial"
			}
			t.Run(name, func(t *testing.T) {
				// One record whose value is the zeros, so the data would
				// parse if it were decoded whole.
				rec := codectest.AppendKafkaRecord(nil, codectest.KafkaRecord{Value: zeros[:len(zeros)-16]}, 0)
				rec = rec[:min(len(rec), len(zeros))]
				comp := compressor(t, c, xerial)(rec)
				b := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Attr: int16(c), Records: []codectest.KafkaRecord{{}},
					Compress: func([]byte) []byte { return comp }})
				after := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 5, Records: testRecords(1, 2)})
				file := append(b, after...)
				var got []scanned
				var s *Scanner
				// One scan first, and from before it to the end of the
				// measured one no collection and one P: the decoders'
				// pooled block buffers (lz4's are up to 4 MiB each) are a
				// fixed cost of the codec, paid once per process, which a
				// collection between tests or the scans, or a scan moved to
				// another P than the one whose pool slot holds them, would
				// otherwise charge to whichever scan comes next.
				defer debug.SetGCPercent(debug.SetGCPercent(-1))
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				// The least of three measured scans: under the race
				// detector sync.Pool drops a quarter of what is put back at
				// random, so one scan may pay for a block buffer again.
				scanAll(t, file, Options{MaxDecoded: 1 << 20})
				n := uint64(math.MaxUint64)
				for range 3 {
					n = min(n, allocated(func() { got, s = scanAll(t, file, Options{MaxDecoded: 1 << 20}) }))
				}
				if len(got) != 2 {
					t.Fatalf("%d records, want the 2 after the bomb", len(got))
				}
				if d := s.Damage(); len(d) != 1 || d[0].Reason != ReasonTooLarge || !errors.Is(d[0], codec.ErrLimit) {
					t.Fatalf("damage %+v, want the limit kind", d)
				}
				t.Logf("%d compressed bytes, %d allocated", len(comp), n)
				if n > 8<<20 {
					t.Fatalf("%d compressed bytes: the scan allocated %d bytes under a 1 MiB limit", len(comp), n)
				}
				if _, err := ReadBatch(bytes.NewReader(file), 0, int64(len(b)), nil, 1<<20); !errors.Is(err, codec.ErrLimit) {
					t.Fatalf("ReadBatch: %v, want ErrLimit", err)
				}
			})
		}
	}
	t.Run("snappy-declared", func(t *testing.T) {
		// A raw snappy block that declares 4 GiB is refused before any
		// decoding.
		blk := binary.AppendUvarint(nil, 1<<32-1)
		blk = append(blk, 0)
		if _, err := Decompress(nil, Snappy, blk, 1<<20); !errors.Is(err, codec.ErrLimit) {
			t.Fatalf("%v, want ErrLimit", err)
		}
	})
}

// TestResyncLinear: damage full of headers that pass every check but the
// checksum, each claiming the rest of the file, costs a scan reads linear
// in the file's size, not a pass per header.
func TestResyncLinear(t *testing.T) {
	t.Parallel()
	good := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Records: testRecords(0, 2)})
	const k = 4096
	size := len(good) + 64*k + 1<<20
	file := make([]byte, size)
	copy(file, good)
	for i := range k {
		at := len(good) + 64*i
		h := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: int64(10 + i), Records: testRecords(0, 1)})[:BatchHeaderSize]
		binary.BigEndian.PutUint32(h[8:], uint32(size-at-LogHeaderSize))
		binary.BigEndian.PutUint32(h[57:], 0)
		copy(file[at:], h)
	}
	limit := int64(12*size + 32<<20)
	cr := &codectest.ReadLimit{R: bytes.NewReader(file), Limit: limit}
	s := NewScanner(cr, int64(size), Options{Window: 64 << 10})
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() != nil {
		t.Fatalf("scan of %d bytes read more than %d: %v", size, limit, s.Err())
	}
	if d := s.Damage(); n != 2 || len(d) != 1 || d[0].Off+d[0].Len != int64(size) {
		t.Fatalf("%d records, damage %+v", n, d)
	}
	t.Logf("%d bytes, %d read", size, cr.Read)
}

// TestResyncSkipsText: resynchronising over damage whose bytes are no
// message format's magic byte (text, as values are) looks at the window
// once per window, not once per byte: a parallel build's parts, which
// each begin by resynchronising, pay little for it.
func TestResyncSkipsText(t *testing.T) {
	t.Parallel()
	a := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 0, Records: testRecords(0, 2)})
	b := codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 2, Records: testRecords(2, 3)})
	junk := bytes.Repeat([]byte("lorem ipsum dolor sit amet "), 4<<20/27)
	file := append(append(append([]byte(nil), a...), junk...), b...)
	s := NewScanner(bytes.NewReader(file), int64(len(file)), Options{})
	n := 0
	for s.Next() {
		n++
	}
	if s.Err() != nil || n != 5 {
		t.Fatalf("%d records, err %v; want 5", n, s.Err())
	}
	if d := s.Damage(); len(d) != 1 || d[0].Off != int64(len(a)) || d[0].Len != int64(len(junk)) {
		t.Fatalf("damage %+v, want [%d, +%d)", d, len(a), len(junk))
	}
	if max := int64(2*len(file)/DefaultWindow + 32); s.ensures > max {
		t.Errorf("the scan of %d bytes of text looked at the window %d times, want at most %d", len(junk), s.ensures, max)
	}
}
