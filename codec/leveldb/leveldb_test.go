package leveldb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// writeLog writes records with a fresh Writer and returns the bytes and
// the offsets WriteRecord reported.
func writeLog(t testing.TB, recs [][]byte, o WriterOptions) ([]byte, []int64) {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out, o)
	offs := make([]int64, len(recs))
	for i, r := range recs {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		offs[i] = off
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), offs
}

// TestLogSpecExample checks the worked example of spec section 5 against the
// spec's own table (offsets, header bytes, trailer), independent of the
// vector file.
func TestLogSpecExample(t *testing.T) {
	t.Parallel()
	recs := [][]byte{codectest.VectorPayload(0, 1000), codectest.VectorPayload(1, 97270), codectest.VectorPayload(2, 8000)}
	data, offs := writeLog(t, recs, WriterOptions{})
	if len(data) != 106311 {
		t.Fatalf("size %d, want 106311", len(data))
	}
	for i, want := range []int64{0, 1007, 98304} {
		if offs[i] != want {
			t.Errorf("record %d at %d, want %d", i, offs[i], want)
		}
	}
	headers := []struct {
		off int
		hex string
	}{
		{0, "d9b95d29e80301"},
		{1007, "8a2f7fac0a7c02"},
		{32768, "17c55c69f97f03"},
		{65536, "49af8d68f37f04"},
		{98298, "000000000000"},
		{98304, "01b9ade3401f01"},
	}
	for _, h := range headers {
		want, _ := hex.DecodeString(h.hex)
		if got := data[h.off : h.off+len(want)]; !bytes.Equal(got, want) {
			t.Errorf("at %d: % x, want % x", h.off, got, want)
		}
	}
	got, s := logScanAll(t, data, Options{})
	if len(got) != 3 || s.Err() != nil || len(s.Damage()) != 0 {
		t.Fatalf("scan: %v, %v, %v", got, s.Err(), s.Damage())
	}
	for i, r := range got {
		if r.Off != offs[i] || !bytes.Equal(logReadWhole(t, data, r), recs[i]) {
			t.Errorf("record %d differs", i)
		}
	}
}

// TestLogCRCValues checks the masked checksums worked out in spec section 3.
func TestLogCRCValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in     string
		crc    uint32
		masked uint32
	}{
		{"01", 0xA016D052, 0x43282B05},
		{"02", 0xB34623A6, 0xE9D05164},
		{"03", 0x412DA0A5, 0xE3CD6D33},
		{"04", 0x95E7C44E, 0x2B2016A7},
		{"01616263", 0xC30D7DB2, 0x9DE870F2},
		{"", 0, 0xA282EAD8},
	}
	for _, c := range cases {
		b, _ := hex.DecodeString(c.in)
		if got := codec.CRC32C(b); got != c.crc {
			t.Errorf("crc32c(%s) = %#x, want %#x", c.in, got, c.crc)
		}
		if got := codec.MaskCRC(c.crc); got != c.masked {
			t.Errorf("mask(%#x) = %#x, want %#x", c.crc, got, c.masked)
		}
	}
	for _, c := range []struct {
		rec  string
		want string
	}{{"abc", "f270e89d03000161626 3"}, {"", "052b2843000001"}} {
		data, _ := writeLog(t, [][]byte{[]byte(c.rec)}, WriterOptions{})
		want, _ := hex.DecodeString(string(bytes.ReplaceAll([]byte(c.want), []byte(" "), nil)))
		if !bytes.Equal(data, want) {
			t.Errorf("file for %q = % x, want % x", c.rec, data, want)
		}
	}
}

// logLayoutModel computes, independently of Writer, the chunk layout the
// spec's writer algorithm (section 4) gives a record of n bytes starting
// with the writer at position pos: chunk header offsets and payload lengths,
// and the position after the record.
func logLayoutModel(pos int64, n int) (offs []int64, lens []int, end int64) {
	left := n
	for first := true; first || left > 0; first = false {
		room := 32768 - pos%32768
		if room < 7 {
			pos += room
			room = 32768
		}
		k := min(left, int(room-7))
		offs = append(offs, pos)
		lens = append(lens, k)
		pos += 7 + int64(k)
		left -= k
	}
	return offs, lens, pos
}

// TestLogWriterBoundarySweep writes a first record that leaves a chosen
// number of bytes in block 0, then a second record of a chosen size, and
// checks the layout against the model, the scanner's view, and ChunkAt.
func TestLogWriterBoundarySweep(t *testing.T) {
	t.Parallel()
	lefts := []int{0, 1, 5, 6, 7, 8, 9, 100, 32761}
	sizes := []int{0, 1, 2, 6, 7, 8, 100, 32753, 32754, 32755, 32760, 32761, 32762, 65521, 65522, 65523, 3 << 20}
	for _, left := range lefts {
		for _, n := range sizes {
			first := 32768 - left - 7 // record 0 fills block 0 up to `left` bytes
			if first < 0 {
				first = 32761
			}
			recs := [][]byte{codectest.VectorPayload(0, first), codectest.VectorPayload(1, n), codectest.VectorPayload(2, 3)}
			data, offs := writeLog(t, recs, WriterOptions{})
			var pos int64
			for i, r := range recs {
				mo, ml, end := logLayoutModel(pos, len(r))
				if offs[i] != mo[0] {
					t.Fatalf("left %d n %d rec %d: at %d, model %d", left, n, i, offs[i], mo[0])
				}
				rec := Record{Off: mo[0], Len: int64(len(r)), Hdr: 7}
				for j := range mo {
					c, ok := ChunkAt(rec, j)
					if !ok || c.Off != mo[j] || int(c.Len) != ml[j] {
						t.Fatalf("left %d n %d rec %d chunk %d: ChunkAt %v %v, model %d/%d", left, n, i, j, c, ok, mo[j], ml[j])
					}
					h := data[mo[j]:]
					if int(binary.LittleEndian.Uint16(h[4:])) != ml[j] {
						t.Fatalf("left %d n %d: length field at %d", left, n, mo[j])
					}
				}
				if _, ok := ChunkAt(rec, len(mo)); ok {
					t.Fatalf("ChunkAt past the last chunk returned ok")
				}
				pos = end
			}
			if int64(len(data)) != pos {
				t.Fatalf("left %d n %d: size %d, model %d", left, n, len(data), pos)
			}
			got, s := logScanAll(t, data, Options{})
			if len(got) != len(recs) || len(s.Damage()) != 0 || s.Err() != nil {
				t.Fatalf("left %d n %d: scan %d records, %v %v", left, n, len(got), s.Damage(), s.Err())
			}
			for i, r := range got {
				if r.Off != offs[i] || r.Chunks != nil || !bytes.Equal(logReadWhole(t, data, r), recs[i]) {
					t.Fatalf("left %d n %d: record %d = %+v", left, n, i, r)
				}
			}
		}
	}
}

// TestLogWriterAppend checks that writing in two sessions (the second told
// the length of the first) gives the bytes of one session.
func TestLogWriterAppend(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		recs := appendTrialRecords(rng)
		whole, woffs := writeLog(t, recs, WriterOptions{})
		cut := rng.IntN(len(recs) + 1)
		a, _ := writeLog(t, recs[:cut], WriterOptions{})
		if out := appendSession(t, a, WriterOptions{}, recs, cut, woffs); !bytes.Equal(out, whole) {
			t.Fatalf("trial %d: two sessions (cut %d) differ from one", trial, cut)
		}
	}
}

// appendTrialRecords makes 1 to 12 records for an append trial, about one
// in four of them near a block long.
func appendTrialRecords(rng *rand.Rand) [][]byte {
	var recs [][]byte
	for i := 0; i < 1+rng.IntN(12); i++ {
		n := rng.IntN(300)
		if rng.IntN(4) == 0 {
			n = 32700 + rng.IntN(100)
		}
		recs = append(recs, codectest.VectorPayload(i, n))
	}
	return recs
}

// appendSession is the second writing session of an append trial: it
// writes recs[cut:] after a, the log of recs[:cut], through a writer with
// options o told the length of a, checks that record cut+i lands at
// woffs[cut+i] (where one session put it), and returns the whole log.
func appendSession(t *testing.T, a []byte, o WriterOptions, recs [][]byte, cut int, woffs []int64) []byte {
	t.Helper()
	o.Offset = int64(len(a))
	var out bytes.Buffer
	out.Write(a)
	w := NewWriter(&out, o)
	for i, r := range recs[cut:] {
		off, err := w.WriteRecord(r)
		if err != nil || off != woffs[cut+i] {
			t.Fatalf("append record %d at %d (%v), one session %d", cut+i, off, err, woffs[cut+i])
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestLogWriterAppEngine checks the padding rules of spec 4.1.
func TestLogWriterAppEngine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		recs []int
		want int64
	}{
		{nil, 0},
		{[]int{0}, 32768},
		{[]int{32761}, 32768},
		{[]int{32754}, 32768},
		{[]int{32761, 1}, 65536},
	}
	for _, c := range cases {
		var recs [][]byte
		for i, n := range c.recs {
			recs = append(recs, codectest.VectorPayload(i, n))
		}
		data, _ := writeLog(t, recs, WriterOptions{AppEngine: true})
		plain, _ := writeLog(t, recs, WriterOptions{})
		if int64(len(data)) != c.want || !bytes.HasPrefix(data, plain) || !codec.AllZero(data[len(plain):]) {
			t.Errorf("%v: %d bytes, want %d (plain %d)", c.recs, len(data), c.want, len(plain))
		}
		got, s := logScanAll(t, data, Options{})
		if len(got) != len(recs) || len(s.Damage()) != 0 {
			t.Errorf("%v: scan %d records, damage %v", c.recs, len(got), s.Damage())
		}
		if padded := int64(len(data)-len(plain)) >= 7; s.Info().Padded != padded {
			t.Errorf("%v: Padded %v, want %v", c.recs, s.Info().Padded, padded)
		}
	}
}

// logFailWriter fails after n bytes.
type logFailWriter struct{ n int }

func (f *logFailWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestLogWriterErrors(t *testing.T) {
	t.Parallel()
	w := NewWriter(&logFailWriter{n: 1000}, WriterOptions{})
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = w.WriteRecord(make([]byte, 40000))
	}
	if err == nil {
		t.Fatal("no error from a failing destination")
	}
	if _, err2 := w.WriteRecord(nil); err2 == nil {
		t.Error("error not sticky")
	}
	if w.Close() == nil {
		t.Error("Close hid the write error")
	}
	w = NewWriter(io.Discard, WriterOptions{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteRecord(nil); err == nil {
		t.Error("WriteRecord after Close succeeded")
	}
}

// TestLogReadBoundaries reads multi-chunk records at every chunk boundary
// ±1 with several lengths, comparing with the written payload.
func TestLogReadBoundaries(t *testing.T) {
	t.Parallel()
	recs := [][]byte{codectest.VectorPayload(0, 5000), codectest.VectorPayload(1, 150000), codectest.VectorPayload(2, 32761), codectest.VectorPayload(3, 0), codectest.VectorPayload(4, 70000)}
	data, _ := writeLog(t, recs, WriterOptions{})
	got, _ := logScanAll(t, data, Options{})
	for i, r := range got {
		want := recs[i]
		var cuts []int64
		var at int64
		for j := 0; ; j++ {
			c, ok := ChunkAt(r, j)
			if !ok {
				break
			}
			at += int64(c.Len)
			cuts = append(cuts, at)
		}
		offs := []int64{0, r.Len, r.Len + 1}
		for _, c := range cuts {
			offs = append(offs, c-1, c, c+1)
		}
		for _, off := range offs {
			for _, n := range []int64{0, 1, 2, 4096, 40000} {
				if off < 0 {
					continue
				}
				p := make([]byte, n)
				k, err := ReadRecord(bytes.NewReader(data), r, p, off, Options{})
				wantN := max(0, min(n, r.Len-off))
				if int64(k) != wantN {
					t.Fatalf("rec %d off %d n %d: read %d, want %d (%v)", i, off, n, k, wantN, err)
				}
				wantEOF := wantN < n || off > r.Len
				if wantEOF != (err == io.EOF) || (!wantEOF && err != nil) {
					t.Fatalf("rec %d off %d n %d: err %v", i, off, n, err)
				}
				if wantN > 0 && !bytes.Equal(p[:k], want[off:off+wantN]) {
					t.Fatalf("rec %d off %d n %d: bytes differ", i, off, n)
				}
			}
		}
	}
}

// logCountingReaderAt records the ranges read.
type logCountingReaderAt struct {
	r     io.ReaderAt
	calls int
	bytes int64
	offs  []int64
}

func (c *logCountingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.calls++
	c.bytes += int64(len(p))
	c.offs = append(c.offs, off)
	return c.r.ReadAt(p, off)
}

// TestLogReadTouchesCoveringChunks reads 4 KiB from a 64 MiB record and
// checks only the covering chunks were read.
func TestLogReadTouchesCoveringChunks(t *testing.T) {
	t.Parallel()
	payload := codectest.VectorPayload(9, 64<<20)
	data, _ := writeLog(t, [][]byte{payload}, WriterOptions{})
	rec := Record{Off: 0, Len: int64(len(payload)), Hdr: 7}
	for _, off := range []int64{0, 32761 - 2048, 40 << 20, int64(len(payload)) - 4096} {
		cr := &logCountingReaderAt{r: bytes.NewReader(data)}
		p := make([]byte, 4096)
		if _, err := ReadRecord(cr, rec, p, off, Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, payload[off:off+4096]) {
			t.Fatalf("off %d: bytes differ", off)
		}
		// Chunks covering [off, off+4096): first chunk holds payload
		// [0, 32761), chunk k≥1 holds [32761*k, 32761*(k+1)).
		k0, k1 := off/32761, (off+4095)/32761
		if cr.calls != int(k1-k0+1) || cr.bytes > 2*32768 {
			t.Errorf("off %d: %d ReadAt calls, %d bytes; want %d calls", off, cr.calls, cr.bytes, k1-k0+1)
		}
		for i, o := range cr.offs {
			if o != (k0+int64(i))*32768 {
				t.Errorf("off %d: read at %d, want chunk %d", off, o, k0+int64(i))
			}
		}
	}
}

// TestLogReadCorrupt checks ReadRecord reports a damaged chunk with its
// offset.
func TestLogReadCorrupt(t *testing.T) {
	t.Parallel()
	data, _ := writeLog(t, [][]byte{codectest.VectorPayload(0, 100000)}, WriterOptions{})
	rec := Record{Off: 0, Len: 100000, Hdr: 7}
	bad := bytes.Clone(data)
	bad[65536+500] ^= 1
	p := make([]byte, 100000)
	n, err := ReadRecord(bytes.NewReader(bad), rec, p, 0, Options{})
	var ce *codec.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, codec.ErrCorrupt) || ce.Off != 65536 || n != 2*32761 {
		t.Fatalf("n %d err %v", n, err)
	}
	// Reading around the damaged chunk still works.
	if _, err := ReadRecord(bytes.NewReader(bad), rec, p[:100], 40000, Options{}); err != nil {
		t.Fatal(err)
	}
	// A truncated file is ErrTruncated.
	_, err = ReadRecord(bytes.NewReader(data[:90000]), rec, p, 0, Options{})
	if !errors.Is(err, codec.ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	// Unmasked files need the option both ways.
	if _, err := ReadRecord(bytes.NewReader(data), rec, p, 0, Options{Unmasked: true}); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("unmasked read of a masked file: %v", err)
	}
}

// TestLogUnmasked builds a legacy unmasked file by rewriting checksums and
// checks it scans only with Unmasked.
func TestLogUnmasked(t *testing.T) {
	t.Parallel()
	recs := [][]byte{codectest.VectorPayload(0, 10), codectest.VectorPayload(1, 40000)}
	data, offs := writeLog(t, recs, WriterOptions{})
	for _, off := range []int64{offs[0], offs[1], 32768} {
		m := binary.LittleEndian.Uint32(data[off:])
		binary.LittleEndian.PutUint32(data[off:], codec.UnmaskCRC(m))
	}
	got, s := logScanAll(t, data, Options{Unmasked: true})
	if len(got) != 2 || len(s.Damage()) != 0 || !bytes.Equal(logReadWholeOpt(t, data, got[1], Options{Unmasked: true}), recs[1]) {
		t.Fatalf("unmasked scan: %v %v", got, s.Damage())
	}
	got, s = logScanAll(t, data, Options{})
	if len(got) != 0 || len(s.Damage()) == 0 {
		t.Fatalf("masked scan of unmasked file: %v %v", got, s.Damage())
	}
}

func logReadWholeOpt(t testing.TB, data []byte, r Record, o Options) []byte {
	p := make([]byte, r.Len)
	if _, err := ReadRecord(bytes.NewReader(data), r, p, 0, o); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLogChunkAtEdges covers ChunkAt's refusals.
func TestLogChunkAtEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rec Record
		i   int
		ok  bool
		c   Chunk
	}{
		{Record{Off: 32762, Len: 1, Hdr: 7}, 0, false, Chunk{}},
		{Record{Off: 32761, Len: 0, Hdr: 7}, 0, true, Chunk{32761, 0}},
		{Record{Off: 32761, Len: 5, Hdr: 7}, 1, true, Chunk{32768, 5}},
		{Record{Off: 32757, Len: 5, Hdr: 11}, 1, true, Chunk{32768, 5}},
		{Record{Off: 100, Len: 5}, 0, true, Chunk{100, 5}},
		{Record{Off: 100, Len: 5}, -1, false, Chunk{}},
		{Record{Off: 0, Len: 1 << 40, Hdr: 19}, 1 << 30, false, Chunk{}},
		{Record{Off: 0, Len: 1 << 40, Hdr: 19}, 3, true, Chunk{3 * 32768, 32749}},
		{Record{Off: 0, Len: 9, Chunks: []Chunk{{0, 0}, {32768, 9}}}, 1, true, Chunk{32768, 9}},
		{Record{Off: 0, Len: 9, Chunks: []Chunk{{0, 0}, {32768, 9}}}, 2, false, Chunk{}},
	}
	for _, c := range cases {
		got, ok := ChunkAt(c.rec, c.i)
		if ok != c.ok || got != c.c {
			t.Errorf("ChunkAt(%+v, %d) = %v %v, want %v %v", c.rec, c.i, got, ok, c.c, c.ok)
		}
	}
}

// logChunkBytes builds one legacy chunk by hand.
func logChunkBytes(typ byte, p []byte) []byte {
	h := make([]byte, 7, 7+len(p))
	binary.LittleEndian.PutUint32(h, codec.MaskCRC(codec.CRC32C(append([]byte{typ}, p...))))
	binary.LittleEndian.PutUint16(h[4:], uint16(len(p)))
	h[6] = typ
	return append(h, p...)
}

// TestLogNonCanonical checks records whose chunks do not follow the writer's
// layout are returned with explicit chunk lists that ReadRecord follows.
func TestLogNonCanonical(t *testing.T) {
	t.Parallel()
	a, b := codectest.VectorPayload(0, 10), codectest.VectorPayload(1, 20)
	var f []byte
	f = append(f, logChunkBytes(2, a)...)   // FIRST of 10 bytes: does not fill block 0
	f = append(f, logChunkBytes(3, nil)...) // an empty MIDDLE in the same block
	f = append(f, logChunkBytes(4, b)...)   // LAST, not at a block start
	got, s := logScanAll(t, f, Options{})
	if len(s.Damage()) != 0 || len(got) != 1 {
		t.Fatalf("%v %v", got, s.Damage())
	}
	r := got[0]
	want := []Chunk{{0, 10}, {17, 0}, {24, 20}}
	if fmt.Sprint(r.Chunks) != fmt.Sprint(want) || r.Len != 30 {
		t.Fatalf("record %+v, want chunks %v", r, want)
	}
	if p := logReadWhole(t, f, r); !bytes.Equal(p, append(append([]byte{}, a...), b...)) {
		t.Fatalf("payload %x", p)
	}
	// Reading part of it touches the covering chunks only.
	p := make([]byte, 3)
	if n, err := ReadRecord(bytes.NewReader(f), r, p, 9, Options{}); n != 3 || err != nil || !bytes.Equal(p, []byte{a[9], b[0], b[1]}) {
		t.Fatalf("read at 9: %d %v %x", n, err, p)
	}
}

// TestLogFragmented checks the bound on explicit chunk lists: a record of
// more than logMaxExplicitChunks tiny chunks is refused with ErrLimit.
func TestLogFragmented(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds an 8 MiB file")
	}
	var f []byte
	mid := logChunkBytes(3, []byte{1})
	for n := 0; n <= logMaxExplicitChunks; {
		if 32768-len(f)%32768 < len(mid) {
			f = append(f, make([]byte, 32768-len(f)%32768)...)
		}
		if n == 0 {
			f = append(f, logChunkBytes(2, []byte{1})...)
		} else {
			f = append(f, mid...)
		}
		n++
	}
	f = append(f, logChunkBytes(4, []byte{2})...)
	got, s := logScanAll(t, f, Options{})
	ds := s.Damage()
	if len(got) != 0 || len(ds) < 1 || ds[0].Reason != logReasonFragmented || !errors.Is(ds[0], codec.ErrLimit) {
		t.Fatalf("%d records, damage %v", len(got), ds[:min(3, len(ds))])
	}
	if cap(s.chunks) > 2*logMaxExplicitChunks {
		t.Fatalf("chunk list grew to %d", cap(s.chunks))
	}
}

// logSynthRecord is an io.ReaderAt over a log holding one record of n bytes
// (payload byte i is byte(i*7)), synthesised block by block on demand so a
// test can address a 1 GiB record without writing it.
type logSynthRecord struct{ n int64 }

func (s logSynthRecord) block(k int64) []byte {
	per := int64(32761)
	start := k * per
	ln := min(per, s.n-start)
	if ln <= 0 {
		return nil
	}
	typ := byte(3)
	switch {
	case k == 0 && ln == s.n:
		typ = 1
	case k == 0:
		typ = 2
	case start+ln == s.n:
		typ = 4
	}
	p := make([]byte, ln)
	for i := range p {
		p[i] = byte((start + int64(i)) * 7)
	}
	return logChunkBytes(typ, p)
}

func (s logSynthRecord) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		b := s.block((off + int64(n)) / 32768)
		in := (off + int64(n)) % 32768
		if in >= int64(len(b)) {
			return n, io.EOF
		}
		n += copy(p[n:], b[in:])
	}
	return n, nil
}

// TestLogReadGiB reads 4 KiB pieces of a synthetic 1 GiB record and checks
// that at most the two covering chunks are read.
func TestLogReadGiB(t *testing.T) {
	t.Parallel()
	const n = 1 << 30
	rec := Record{Off: 0, Len: n, Hdr: 7}
	for _, off := range []int64{0, 32761 - 100, 500 << 20, 1000*32761 - 10, n - 4096} {
		cr := &logCountingReaderAt{r: logSynthRecord{n}}
		p := make([]byte, 4096)
		if k, err := ReadRecord(cr, rec, p, off, Options{}); k != 4096 || err != nil {
			t.Fatalf("off %d: %d, %v", off, k, err)
		}
		for i, c := range p {
			if c != byte((off+int64(i))*7) {
				t.Fatalf("off %d: byte %d wrong", off, i)
			}
		}
		if cr.calls > 2 || cr.bytes > 2*32768 {
			t.Errorf("off %d: %d ReadAt calls, %d bytes", off, cr.calls, cr.bytes)
		}
	}
}

// logErrReaderAt fails every read that reaches past limit.
type logErrReaderAt struct {
	r     io.ReaderAt
	limit int64
}

var errLogTestIO = errors.New("device on fire")

func (e logErrReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > e.limit {
		return 0, errLogTestIO
	}
	return e.r.ReadAt(p, off)
}

// TestLogScanIO checks I/O errors end the scan with the error itself, and
// a file shorter than the size given is an io.ErrUnexpectedEOF, both
// distinct from content damage.
func TestLogScanIO(t *testing.T) {
	t.Parallel()
	data, _ := writeLog(t, [][]byte{codectest.VectorPayload(0, 100), codectest.VectorPayload(1, 600000), codectest.VectorPayload(2, 100)}, WriterOptions{})
	s := NewScanner(logErrReaderAt{bytes.NewReader(data), 300000}, int64(len(data)), Options{})
	n := 0
	for s.Next() {
		n++
	}
	if !errors.Is(s.Err(), errLogTestIO) || n != 1 {
		t.Errorf("failing reader: %d records, err %v", n, s.Err())
	}
	s = NewScanner(bytes.NewReader(data), int64(len(data))+1000, Options{})
	for s.Next() {
	}
	if !errors.Is(s.Err(), io.ErrUnexpectedEOF) || errors.Is(s.Err(), codec.ErrCorrupt) {
		t.Errorf("short file: err %v", s.Err())
	}
	s = NewScanner(bytes.NewReader(data), int64(len(data)), Options{Start: 100, End: 32768})
	if s.Next() || s.Err() == nil {
		t.Errorf("misaligned split start accepted")
	}
}

// TestLogLead checks a split that starts inside a record hands its
// continuation chunks to Lead, and ConsumedEnd of the split before it
// covers them.
func TestLogLead(t *testing.T) {
	t.Parallel()
	recs := [][]byte{codectest.VectorPayload(0, 100), codectest.VectorPayload(1, 100000), codectest.VectorPayload(2, 10)}
	data, offs := writeLog(t, recs, WriterOptions{})
	first, s0 := logScanAll(t, data, Options{Start: 0, End: 32768})
	if len(first) != 2 || first[1].Off != offs[1] || first[1].Len != 100000 {
		t.Fatalf("part 0: %v", first)
	}
	_, s1 := logScanAll(t, data, Options{Start: 32768, End: 65536})
	wantLead := []Chunk{{32768, 32761}} // the MIDDLE at 65536 is past End: the next part's
	if fmt.Sprint(s1.Lead()) != fmt.Sprint(wantLead) {
		t.Fatalf("Lead = %v, want %v", s1.Lead(), wantLead)
	}
	// Record 1 ends in block 3 with a LAST chunk: part 0 consumed it all.
	rec1 := Record{Off: offs[1], Len: 100000, Hdr: 7}
	var end int64
	for i := 0; ; i++ {
		c, ok := ChunkAt(rec1, i)
		if !ok {
			break
		}
		end = c.Off + 7 + int64(c.Len)
	}
	if s0.ConsumedEnd() != end || len(s1.LeadDamage(end)) != 0 || len(s1.LeadDamage(0)) != 1 {
		t.Errorf("ConsumedEnd %d (want %d), LeadDamage %v / %v", s0.ConsumedEnd(), end, s1.LeadDamage(end), s1.LeadDamage(0))
	}
}

// TestLogTinyFiles covers files made only of padding or fragments.
func TestLogTinyFiles(t *testing.T) {
	t.Parallel()
	full, _ := writeLog(t, [][]byte{[]byte("abc")}, WriterOptions{})
	cases := []struct {
		name    string
		data    []byte
		nrec    int
		reasons string
		padded  bool
	}{
		{"empty", nil, 0, "[]", false},
		{"zero-block", make([]byte, 32768), 0, "[]", true},
		{"two-zero-blocks-and-a-record", append(make([]byte, 65536), full...), 1, "[]", true},
		{"three-zero-bytes", make([]byte, 3), 0, "[]", false},
		{"three-bytes", []byte{1, 2, 3}, 0, "[truncated header]", false},
		{"record-then-zero-tail", append(bytes.Clone(full), make([]byte, 20)...), 1, "[]", true},
		{"record-cut-in-payload", full[:9], 0, "[truncated chunk]", false},
		{"record-cut-in-header", full[:5], 0, "[truncated header]", false},
		{"empty-first-then-eof", logChunkBytes(2, nil), 0, "[]", false},
		{"first-then-eof", logChunkBytes(2, []byte("x")), 0, "[record cut short]", false},
	}
	for _, c := range cases {
		got, s := logScanAll(t, c.data, Options{})
		var rs []string
		for _, d := range s.Damage() {
			rs = append(rs, d.Reason)
		}
		if len(got) != c.nrec || fmt.Sprint(rs) != c.reasons && !(len(rs) == 0 && c.reasons == "[]") || s.Info().Padded != c.padded || s.Err() != nil {
			t.Errorf("%s: %d records, damage %v, info %+v, err %v", c.name, len(got), s.Damage(), s.Info(), s.Err())
		}
	}
}
