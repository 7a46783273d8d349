package leveldb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// The corrupter suite damages logs written by Writer in known ways and
// compares the scanner with a logical model built from the writer layout
// (logLayoutModel), not from the scanner: which records survive, that every
// damaged byte is reported, and that survivors' bytes are intact.

// logMChunk is one chunk of the model: where it is in the damaged file, which
// record it belongs to, and which payload bytes of that record it carries.
type logMChunk struct {
	off   int64
	n     int
	kind  int
	rec   int
	start int // payload offset inside record rec
}

// logMEvent is a point in the damaged file where the model's reader must drop
// the record in progress: damage or zero padding.
type logMEvent struct {
	off int64
}

// logModel describes a written log.
type logModel struct {
	recs   [][]byte
	chunks []logMChunk
	size   int64
}

// buildLogModel writes recs and lays out their chunks with the spec model.
func buildLogModel(t testing.TB, recs [][]byte) (*logModel, []byte) {
	data, offs := writeLog(t, recs, WriterOptions{})
	m := &logModel{recs: recs, size: int64(len(data))}
	var pos int64
	for i, r := range recs {
		co, cl, end := logLayoutModel(pos, len(r))
		if co[0] != offs[i] {
			t.Fatalf("writer put record %d at %d, model %d", i, offs[i], co[0])
		}
		start := 0
		for j := range co {
			k := logKindMiddle
			switch {
			case len(co) == 1:
				k = logKindFull
			case j == 0:
				k = logKindFirst
			case j == len(co)-1:
				k = logKindLast
			}
			m.chunks = append(m.chunks, logMChunk{off: co[j], n: cl[j], kind: k, rec: i, start: start})
			start += cl[j]
		}
		pos = end
	}
	return m, data
}

// logMRecord is a record the model's reader returns.
type logMRecord struct {
	off   int64
	parts []logMChunk
}

func (m *logModel) bytesOf(r logMRecord) []byte {
	var b []byte
	for _, c := range r.parts {
		b = append(b, m.recs[c.rec][c.start:c.start+c.n]...)
	}
	return b
}

// read runs the logical reader over chunks and events in file order.
func (m *logModel) read(chunks []logMChunk, events []logMEvent) []logMRecord {
	var out []logMRecord
	var cur *logMRecord
	ci, ei := 0, 0
	for ci < len(chunks) || ei < len(events) {
		if ei < len(events) && (ci >= len(chunks) || events[ei].off <= chunks[ci].off) {
			cur = nil
			ei++
			continue
		}
		c := chunks[ci]
		ci++
		switch c.kind {
		case logKindFull:
			cur = nil
			out = append(out, logMRecord{off: c.off, parts: []logMChunk{c}})
		case logKindFirst:
			cur = &logMRecord{off: c.off, parts: []logMChunk{c}}
		default:
			if cur == nil {
				continue // orphan
			}
			cur.parts = append(cur.parts, c)
			if c.kind == logKindLast {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
	return out
}

// logCorruption is one way of damaging a log: it returns the damaged bytes,
// the chunks and events the model's reader sees, the byte ranges of the
// damaged file that must be reported, and the ranges that are padding.
type logCorruption struct {
	name  string
	apply func(m *logModel, data []byte, rng *rand.Rand) (out []byte, chunks []logMChunk, events []logMEvent, must [][2]int64, zero [][2]int64)
}

// chunkAt returns the index of the model chunk holding byte x, or -1.
func (m *logModel) chunkAt(x int64) int {
	for i, c := range m.chunks {
		if x >= c.off && x < c.off+7+int64(c.n) {
			return i
		}
	}
	return -1
}

// dropRestOfBlock returns the chunks surviving damage to chunk i (every
// chunk of its block from it on is lost) and the damage event.
func (m *logModel) dropRestOfBlock(i int) ([]logMChunk, []logMEvent) {
	bad := m.chunks[i]
	blk := bad.off / 32768
	var out []logMChunk
	for _, c := range m.chunks {
		if c.off/32768 == blk && c.off >= bad.off {
			continue
		}
		out = append(out, c)
	}
	return out, []logMEvent{{bad.off}}
}

// logFlipIn flips one byte chosen by pick inside a chunk chosen by choose.
func logFlipIn(choose func(m *logModel, rng *rand.Rand) int, pick func(c logMChunk, rng *rand.Rand) int64) func(*logModel, []byte, *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
	return func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		i := choose(m, rng)
		if i < 0 {
			return data, m.chunks, nil, nil, nil
		}
		x := pick(m.chunks[i], rng)
		out := bytes.Clone(data)
		out[x] ^= byte(1 << rng.IntN(8))
		ch, ev := m.dropRestOfBlock(i)
		return out, ch, ev, [][2]int64{{x, x + 1}}, nil
	}
}

func logAnyChunk(m *logModel, rng *rand.Rand) int { return rng.IntN(len(m.chunks)) }

func logChunkWith(pred func(c logMChunk) bool) func(*logModel, *rand.Rand) int {
	return func(m *logModel, rng *rand.Rand) int {
		var is []int
		for i, c := range m.chunks {
			if pred(c) {
				is = append(is, i)
			}
		}
		if len(is) == 0 {
			return -1
		}
		return is[rng.IntN(len(is))]
	}
}

func logHdrByte(lo, hi int64) func(logMChunk, *rand.Rand) int64 {
	return func(c logMChunk, rng *rand.Rand) int64 { return c.off + lo + rng.Int64N(hi-lo) }
}

var logCorruptions = []logCorruption{
	{"flip-crc", logFlipIn(logAnyChunk, logHdrByte(0, 4))},
	{"flip-length-lo", logFlipIn(logAnyChunk, logHdrByte(4, 5))},
	{"flip-length-hi", logFlipIn(logAnyChunk, logHdrByte(5, 6))},
	{"flip-type", logFlipIn(logAnyChunk, logHdrByte(6, 7))},
	{"flip-payload-first", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.n > 0 }), func(c logMChunk, _ *rand.Rand) int64 { return c.off + 7 })},
	{"flip-payload-last", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.n > 0 }), func(c logMChunk, _ *rand.Rand) int64 { return c.off + 6 + int64(c.n) })},
	{"flip-payload-any", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.n > 0 }), func(c logMChunk, rng *rand.Rand) int64 { return c.off + 7 + rng.Int64N(int64(c.n)) })},
	{"flip-empty-chunk", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.n == 0 }), logHdrByte(0, 7))},
	{"flip-middle", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.kind == logKindMiddle }), logHdrByte(0, 7))},
	{"flip-last", logFlipIn(logChunkWith(func(c logMChunk) bool { return c.kind == logKindLast }), logHdrByte(0, 7))},
	{"flip-trailer", func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		// A byte outside every chunk (a trailer) is never read.
		var xs []int64
		for x := int64(0); x < m.size; x++ {
			if x%32768 >= 32762 && m.chunkAt(x) < 0 {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			return data, m.chunks, nil, nil, nil
		}
		out := bytes.Clone(data)
		out[xs[rng.IntN(len(xs))]] ^= 0x40
		return out, m.chunks, nil, nil, nil
	}},
	{"cut", func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		c := rng.Int64N(m.size + 1)
		var ch []logMChunk
		var must [][2]int64
		for _, k := range m.chunks {
			if end := k.off + 7 + int64(k.n); end <= c {
				ch = append(ch, k)
			} else if k.off < c {
				must = append(must, [2]int64{k.off, c}) // a partial chunk
			}
		}
		return data[:c], ch, []logMEvent{{c}}, must, nil
	}},
	{"zero-block", func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		b := rng.Int64N((m.size + 32767) / 32768)
		lo, hi := b*32768, min((b+1)*32768, m.size)
		out := bytes.Clone(data)
		clear(out[lo:hi])
		var ch []logMChunk
		for _, k := range m.chunks {
			if k.off/32768 != b {
				ch = append(ch, k)
			}
		}
		return out, ch, []logMEvent{{lo}}, nil, [][2]int64{{lo, hi}}
	}},
	{"insert-garbage-block", func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		b := rng.Int64N((m.size+32767)/32768) * 32768
		g := make([]byte, 32768)
		for i := range g {
			g[i] = byte(rng.IntN(256))
		}
		g[6] = 0xee // an unknown type, so the garbage cannot be padding or a chunk
		out := append(append(bytes.Clone(data[:b]), g...), data[b:]...)
		var ch []logMChunk
		for _, k := range m.chunks {
			if k.off >= b {
				k.off += 32768
			}
			ch = append(ch, k)
		}
		return out, ch, []logMEvent{{b}}, [][2]int64{{b, b + 32768}}, nil
	}},
	{"duplicate-block", func(m *logModel, data []byte, rng *rand.Rand) ([]byte, []logMChunk, []logMEvent, [][2]int64, [][2]int64) {
		nb := m.size / 32768 // only whole blocks
		if nb == 0 {
			return data, m.chunks, nil, nil, nil
		}
		b := rng.Int64N(nb) * 32768
		out := append(bytes.Clone(data[:b+32768]), data[b:]...)
		var ch []logMChunk
		for _, k := range m.chunks {
			if k.off < b+32768 {
				ch = append(ch, k)
			}
		}
		for _, k := range m.chunks {
			if k.off >= b && k.off < b+32768 {
				k.off += 32768
				ch = append(ch, k)
			}
		}
		for _, k := range m.chunks {
			if k.off >= b+32768 {
				k.off += 32768
				ch = append(ch, k)
			}
		}
		return out, ch, nil, nil, nil
	}},
}

// randomLogRecords makes a mix of small, block-crossing and multi-block
// records.
func randomLogRecords(rng *rand.Rand, n int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		var l int
		switch rng.IntN(6) {
		case 0:
			l = 0
		case 1:
			l = 32754 + rng.IntN(15)
		case 2:
			l = 32761 + rng.IntN(70000)
		default:
			l = rng.IntN(2000)
		}
		recs[i] = codectest.VectorPayload(rng.IntN(1<<20), l)
	}
	return recs
}

// logCovered reports whether [lo, hi) lies inside the union of ds.
func logCovered(ds []codec.Damage, lo, hi int64) bool {
	for lo < hi {
		moved := false
		for _, d := range ds {
			if d.Off <= lo && lo < d.Off+d.Len {
				lo = d.Off + d.Len
				moved = true
			}
		}
		if !moved {
			return false
		}
	}
	return true
}

func TestLogCorrupter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range logCorruptions {
		t.Run(c.name, func(t *testing.T) {
			for trial := 0; trial < 40; trial++ {
				m, data := buildLogModel(t, randomLogRecords(rng, 1+rng.IntN(30)))
				bad, chunks, events, must, zero := c.apply(m, data, rng)
				want := m.read(chunks, events)
				desc := fmt.Sprintf("trial %d (%d bytes)", trial, len(bad))
				got, s := logScanAll(t, bad, Options{})
				if s.Err() != nil {
					t.Fatalf("%s: Err %v", desc, s.Err())
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d records, model %d; damage %v", desc, len(got), len(want), s.Damage())
				}
				for i, r := range got {
					w := want[i]
					wb := m.bytesOf(w)
					if r.Off != w.off || r.Len != int64(len(wb)) {
						t.Fatalf("%s: record %d at %d len %d, model at %d len %d", desc, i, r.Off, r.Len, w.off, len(wb))
					}
					if !bytes.Equal(logReadWhole(t, bad, r), wb) {
						t.Fatalf("%s: record %d bytes differ from the model", desc, i)
					}
					if c.name != "duplicate-block" && !bytes.Equal(wb, m.recs[w.parts[0].rec]) {
						t.Fatalf("%s: model returned a record that was never written", desc)
					}
				}
				ds := s.Damage()
				for i, d := range ds {
					if d.Off < 0 || d.Len <= 0 || d.Off+d.Len > int64(len(bad)) || (i > 0 && d.Off < ds[i-1].Off) {
						t.Fatalf("%s: bad damage list %v", desc, ds)
					}
					if !errors.Is(d, codec.ErrCorrupt) && !errors.Is(d, codec.ErrTruncated) {
						t.Fatalf("%s: damage %v has no sentinel", desc, d)
					}
				}
				for _, r := range must {
					if !logCovered(ds, r[0], r[1]) {
						t.Fatalf("%s: damaged bytes [%d,%d) not reported in %v", desc, r[0], r[1], ds)
					}
				}
				if c.name == "duplicate-block" {
					continue
				}
				// Every byte of a lost record's non-empty chunks that is
				// still in the file (and not zeroed) is reported.
				kept := map[int]bool{}
				for _, w := range want {
					kept[w.parts[0].rec] = true
				}
				for _, k := range chunks {
					if kept[k.rec] || k.n == 0 {
						continue
					}
					lo, hi := k.off, min(k.off+7+int64(k.n), int64(len(bad)))
					inZero := false
					for _, z := range zero {
						inZero = inZero || (lo >= z[0] && lo < z[1])
					}
					if !inZero && lo < hi && !logCovered(ds, lo, hi) {
						t.Fatalf("%s: lost record %d chunk [%d,%d) not reported in %v", desc, k.rec, lo, hi, ds)
					}
				}
				// Strict mode stops at the first damage with a CorruptError.
				srecs, ss := logScanAll(t, bad, Options{Strict: true})
				var ce *codec.CorruptError
				if len(ds) == 0 {
					if ss.Err() != nil || len(srecs) != len(got) {
						t.Fatalf("%s: strict on undamaged file: %v", desc, ss.Err())
					}
				} else if !errors.As(ss.Err(), &ce) || ce.Off != ds[0].Off || len(srecs) > len(got) {
					t.Fatalf("%s: strict err %v, first damage %v", desc, ss.Err(), ds[0])
				}
			}
		})
	}
}

// TestLogDamageKinds pins the reason and sentinel of each damage kind on
// small hand-made files.
func TestLogDamageKinds(t *testing.T) {
	t.Parallel()
	two, _ := writeLog(t, [][]byte{codectest.VectorPayload(0, 100), codectest.VectorPayload(1, 40000)}, WriterOptions{})
	mod := func(b []byte, f func([]byte)) []byte { b = bytes.Clone(b); f(b); return b }
	cases := []struct {
		name   string
		data   []byte
		reason []string
		nrec   int
	}{
		{"checksum", mod(two, func(b []byte) { b[10] ^= 1 }), []string{logReasonChecksum, logReasonOrphan}, 0},
		{"length", mod(two, func(b []byte) { b[5] = 0x90 }), []string{logReasonLength, logReasonOrphan}, 0},
		{"type", mod(two, func(b []byte) { b[6] = 0x33 }), []string{logReasonChecksum, logReasonOrphan}, 0},
		{"zero-header-then-data", mod(two, func(b []byte) { clear(b[:7]) }), []string{logReasonZeroHeader, logReasonOrphan}, 0},
		{"cut-in-header", two[:107+3], []string{logReasonTruncHdr}, 1},
		{"cut-in-payload", two[:32768+100], []string{logReasonCutShort, logReasonTruncChunk}, 1},
		{"cut-at-block", two[:32768], []string{logReasonCutShort}, 1},
		{"orphan", two[32768:], []string{logReasonOrphan}, 0},
		{"first-then-full", mod(two, func(b []byte) {
			// Rewrite record 1's LAST as a FULL: record 1's FIRST is cut short.
			b[32768+6] = 1
			copy(b[32768:], b[32768:32768+4])
			w := bytes.Buffer{}
			lw := NewWriter(&w, WriterOptions{Offset: 32768})
			_, _ = lw.WriteRecord(b[32768+7 : 32768+7+int(b[32768+4])+int(b[32768+5])<<8])
			_ = lw.Flush()
			copy(b[32768:], w.Bytes()[:7])
		}), []string{logReasonCutShort}, 2},
	}
	for _, c := range cases {
		got, s := logScanAll(t, c.data, Options{})
		var rs []string
		for _, d := range s.Damage() {
			rs = append(rs, d.Reason)
			want := codec.ErrCorrupt
			if d.Reason == logReasonTruncHdr || d.Reason == logReasonTruncChunk || (c.name[:3] == "cut" && d.Reason == logReasonCutShort) {
				want = codec.ErrTruncated
			}
			if !errors.Is(d, want) {
				t.Errorf("%s: %v is not %v", c.name, d, want)
			}
		}
		if fmt.Sprint(rs) != fmt.Sprint(c.reason) || len(got) != c.nrec {
			t.Errorf("%s: %d records, damage %v; want %d, %v", c.name, len(got), s.Damage(), c.nrec, c.reason)
		}
	}
}

// mergeLogSplits is the index's merge rule for split scans: records in part
// order; damage is the union, plus the lead chunks of each part at offsets at
// or past every earlier part's ConsumedEnd (orphans), joined by
// MergeDamage; a part that stopped at an end of log (marker or stale
// data) ends the merged log.
func mergeLogSplits(parts []*Scanner, recs [][]Record) ([]Record, []codec.Damage) {
	var out []Record
	var ds []codec.Damage
	var consumed int64
	for i, p := range parts {
		ds = append(ds, p.LeadDamage(consumed)...)
		ds = append(ds, p.Damage()...)
		out = append(out, recs[i]...)
		consumed = max(consumed, p.ConsumedEnd())
		if p.Info().End < p.size { // an end marker or stale data ended the log
			break
		}
	}
	return out, MergeDamage(ds)
}

// logBlockCuts returns the block boundaries inside a log of size bytes:
// the cuts that split it into parts of one block each.
func logBlockCuts(size int) []int64 {
	var cuts []int64
	for b := int64(logBlockSize); b < int64(size); b += logBlockSize {
		cuts = append(cuts, b)
	}
	return cuts
}

// checkSplitScan fails the test unless data, scanned in parts of one
// block each with options o, gives the records and damage of its whole
// scan, recs and ds (the index merges parts so).
func checkSplitScan(t testing.TB, data []byte, o Options, recs []Record, ds []codec.Damage) {
	t.Helper()
	sr, sd := logSplitScanWith(t, data, logBlockCuts(len(data)), o)
	if fmt.Sprint(sr) != fmt.Sprint(recs) || fmt.Sprint(sd) != fmt.Sprint(ds) {
		t.Errorf("split scan: %v %v, whole: %v %v", sr, sd, recs, ds)
	}
}

// logSplitScan scans data in parts cut at the given block boundaries.
func logSplitScan(t testing.TB, data []byte, cuts []int64) ([]Record, []codec.Damage) {
	return logSplitScanWith(t, data, cuts, Options{})
}

// logSplitScanWith is logSplitScan with the parts' options (Start and End
// set per part).
func logSplitScanWith(t testing.TB, data []byte, cuts []int64, o Options) ([]Record, []codec.Damage) {
	var parts []*Scanner
	var recs [][]Record
	bounds := append(append([]int64{0}, cuts...), int64(len(data)))
	for i := 0; i+1 < len(bounds); i++ {
		o.Start, o.End = bounds[i], bounds[i+1]
		r, s := logScanAll(t, data, o)
		if s.Err() != nil {
			t.Fatalf("split [%d,%d): %v", bounds[i], bounds[i+1], s.Err())
		}
		parts = append(parts, s)
		recs = append(recs, r)
	}
	return mergeLogSplits(parts, recs)
}

func TestLogSplitScan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	type file struct {
		name string
		data []byte
	}
	var files []file
	for _, v := range loadLogVectors(t) {
		files = append(files, file{v.m.Name, v.data})
	}
	for i := 0; i < 60; i++ {
		m, data := buildLogModel(t, randomLogRecords(rng, 1+rng.IntN(40)))
		c := logCorruptions[rng.IntN(len(logCorruptions))]
		bad, _, _, _, _ := c.apply(m, data, rng)
		files = append(files, file{fmt.Sprintf("random-%d-%s", i, c.name), bad})
		files = append(files, file{fmt.Sprintf("random-%d-clean", i), data})
	}
	for _, f := range files {
		whole, s := logScanAll(t, f.data, Options{})
		wd := s.Damage()
		nb := (int64(len(f.data)) + 32767) / 32768
		for trial := 0; trial < 12; trial++ {
			var cuts []int64
			for b := int64(1); b < nb; b++ {
				if rng.IntN(3) == 0 || trial == 0 {
					cuts = append(cuts, b*32768)
				}
			}
			got, gd := logSplitScan(t, f.data, cuts)
			if fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Fatalf("%s cuts %v: split records\n%v\nwhole\n%v", f.name, cuts, got, whole)
			}
			if fmt.Sprint(gd) != fmt.Sprint(wd) {
				t.Fatalf("%s cuts %v: split damage\n%v\nwhole\n%v", f.name, cuts, gd, wd)
			}
		}
	}
}

// TestLogInsertGarbage inserts random bytes at a random place (shifting the
// rest of the file off its block alignment). What the scanner can still
// find after that depends on where the shifted chunks land, so the check is:
// every record wholly before the damaged chunk survives, every record
// returned is a written record (in order, byte-exact, at its shifted
// offset), and the garbage is reported as damage.
func TestLogInsertGarbage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 17))
	for trial := 0; trial < 150; trial++ {
		m, data := buildLogModel(t, randomLogRecords(rng, 1+rng.IntN(30)))
		x := rng.Int64N(m.size)
		g := 1 + rng.Int64N(70000)
		if g%32768 == 0 {
			g++
		}
		garbage := make([]byte, g)
		for i := range garbage {
			garbage[i] = byte(rng.IntN(256))
		}
		bad := append(append(bytes.Clone(data[:x]), garbage...), data[x:]...)
		// The first chunk touched: the one holding x, or the first after it.
		cut := m.size
		for _, c := range m.chunks {
			if c.off+7+int64(c.n) > x {
				cut = c.off
				break
			}
		}
		got, s := logScanAll(t, bad, Options{})
		desc := fmt.Sprintf("trial %d: %d garbage bytes at %d", trial, g, x)
		next := 0 // next written record a returned one may match
		for _, r := range got {
			old := r.Off
			if old >= x+g {
				old -= g
			}
			for next < len(m.recs) && m.chunks[logFirstChunk(m, next)].off != old {
				// Records skipped must not lie wholly before cut.
				if end := logRecordEnd(m, next); end <= cut {
					t.Fatalf("%s: record %d (ends %d, before %d) lost", desc, next, end, cut)
				}
				next++
			}
			if next == len(m.recs) {
				t.Fatalf("%s: returned record at %d matches no written record", desc, r.Off)
			}
			if !bytes.Equal(logReadWhole(t, bad, r), m.recs[next]) {
				t.Fatalf("%s: record %d bytes differ", desc, next)
			}
			next++
		}
		for ; next < len(m.recs); next++ {
			if end := logRecordEnd(m, next); end <= cut {
				t.Fatalf("%s: record %d (ends %d, before %d) lost", desc, next, end, cut)
			}
		}
		lo := x
		if lo%32768 > 32761 {
			lo += 32768 - lo%32768 // garbage in a block's last 6 bytes is never read
		}
		if lo < x+g && !logCovered(s.Damage(), lo, x+g) {
			t.Fatalf("%s: garbage not covered by %v", desc, s.Damage())
		}
	}
}

// logFirstChunk returns the index in m.chunks of record i's first chunk.
func logFirstChunk(m *logModel, i int) int {
	for j, c := range m.chunks {
		if c.rec == i {
			return j
		}
	}
	return -1
}

// logRecordEnd returns the offset just past record i's last chunk.
func logRecordEnd(m *logModel, i int) int64 {
	var end int64
	for _, c := range m.chunks {
		if c.rec == i {
			end = c.off + 7 + int64(c.n)
		}
	}
	return end
}

// TestLogDamageJoined checks that runs of tiny bad chunks cost one damage
// entry per run, in whole and split scans alike.
func TestLogDamageJoined(t *testing.T) {
	t.Parallel()
	var f []byte
	mid := logChunkBytes(3, []byte{9}) // an orphan MIDDLE, 8 bytes
	for len(f) < 2*32768+800 {
		f = append(f, mid...) // 4096 per block: they end exactly on block boundaries
	}
	f = append(f, logChunkBytes(1, []byte("ok"))...)
	got, s := logScanAll(t, f, Options{})
	want := []codec.Damage{{Off: 0, Len: 2*32768 + 800, Reason: logReasonOrphan, Err: codec.ErrCorrupt}}
	if len(got) != 1 || fmt.Sprint(s.Damage()) != fmt.Sprint(want) {
		t.Fatalf("%d records, damage %v, want %v", len(got), s.Damage(), want)
	}
	for _, cuts := range [][]int64{{32768}, {65536}, {32768, 65536}} {
		recs, ds := logSplitScan(t, f, cuts)
		if len(recs) != 1 || fmt.Sprint(ds) != fmt.Sprint(want) {
			t.Errorf("cuts %v: %d records, damage %v", cuts, len(recs), ds)
		}
	}
	ds := MergeDamage([]codec.Damage{
		{Off: 10, Len: 5, Kind: codec.DamageChecksum, Reason: "a", Err: codec.ErrCorrupt},
		{Off: 0, Len: 10, Kind: codec.DamageChecksum, Reason: "a", Err: codec.ErrCorrupt},
		{Off: 15, Len: 5, Kind: codec.DamageLength, Reason: "b", Err: codec.ErrCorrupt},
		{Off: 20, Len: 5, Kind: codec.DamageLength, Reason: "b", Err: codec.ErrTruncated},
		{Off: 30, Len: 5, Kind: codec.DamageLength, Reason: "b", Err: codec.ErrTruncated},
	})
	if fmt.Sprint(ds) != "[a: 15 bytes at offset 0 b: 5 bytes at offset 15 b: 5 bytes at offset 20 b: 5 bytes at offset 30]" {
		t.Errorf("MergeDamage = %v", ds)
	}
}
