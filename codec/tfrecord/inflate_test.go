package tfrecord

import (
	"bytes"
	"context"
	"errors"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

func zz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// textRecords returns n records of text-like bytes (compressible about
// threefold, as tf.Example protos of ids and tokens are) of up to maxLen
// bytes.
func textRecords(rng *rand.Rand, n, maxLen int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = codectest.Text(rng, rng.IntN(maxLen+1))
	}
	return out
}

// indexAll runs IndexCompressed over z and returns its result and records.
func indexAll(t testing.TB, z []byte, c Compression, o IndexOptions) (IndexResult, []Record) {
	t.Helper()
	var recs []Record
	res, err := IndexCompressed(context.Background(), bytes.NewReader(z), int64(len(z)), c, o, func(r Record) bool {
		recs = append(recs, r)
		return true
	})
	if err != nil {
		t.Fatalf("IndexCompressed: %v", err)
	}
	if err := res.Index.Check(int64(len(z))); err != nil {
		t.Fatalf("the index fails its own check: %v", err)
	}
	return res, recs
}

// countingAt counts the bytes read through it.
type countingAt struct {
	r  io.ReaderAt
	n  int64
	mu sync.Mutex
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

func TestIndexCompressedReadsBack(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	recs := textRecords(rng, 800, 6000)
	file, offs := writeAll(t, recs)
	// Three gzip members, cut at record boundaries and not.
	a, b := int(offs[300]), int(offs[600])+5
	for _, tc := range []struct {
		name string
		c    Compression
		z    []byte
	}{
		{"gzip", Gzip, codectest.Gzip(file)},
		{"gzip members", Gzip, append(append(codectest.Gzip(file[:a]), codectest.Gzip(file[a:b])...), codectest.Gzip(file[b:])...)},
		{"zlib", Zlib, zz(t, file)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, got := indexAll(t, tc.z, tc.c, IndexOptions{Spacing: testSpacing})
			if len(got) != len(recs) || len(res.Damage) != 0 || res.Index.Size != int64(len(file)) {
				t.Fatalf("%d records (want %d), damage %v, size %d (want %d)", len(got), len(recs), res.Damage, res.Index.Size, len(file))
			}
			for i, r := range got {
				if r.Off != offs[i] || r.Len != int64(len(recs[i])) {
					t.Fatalf("record %d at %+v, want offset %d", i, r, offs[i])
				}
			}
			pts := res.Index.Points
			if want := len(file) / (4 * testSpacing); len(pts) < want {
				t.Errorf("%d checkpoints for %d bytes, want at least %d", len(pts), len(file), want)
			}
			t.Logf("%d bytes, %d compressed, %d checkpoints taking %d bytes (%.2f%%)", len(file), len(tc.z), len(pts),
				res.Index.EncodedSize(), 100*float64(res.Index.EncodedSize())/float64(len(tc.z)))
			in, err := NewInflated(bytes.NewReader(tc.z), int64(len(tc.z)), res.Index, InflatedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{len(recs) - 1, 0, 500, 499, 7, 799, 600} {
				before := in.Decompressed()
				p := make([]byte, len(recs[i]))
				if _, err := ReadRecord(in, got[i], p, 0); err != nil || !bytes.Equal(p, recs[i]) {
					t.Fatalf("record %d: %v", i, err)
				}
				if n := in.Decompressed() - before; n > maxSpan(res.Index)+int64(len(p))+1<<unitMax {
					t.Errorf("record %d of %d bytes decompressed %d bytes (longest span %d)", i, len(p), n, maxSpan(res.Index))
				}
			}
		})
	}
}

// maxSpan returns the longest span between checkpoints.
func maxSpan(x *SeekIndex) int64 {
	var m int64
	for i := range x.Points {
		m = max(m, x.spanEnd(i)-x.Points[i].Out)
	}
	return m
}

// testSpacing is the checkpoint spacing of the tests: small, for many
// checkpoints in little data.
const testSpacing = 64 << 10

// testStream is a gzipped stream of text records (about 2 MB
// decompressed, 0.6 MB compressed) in three members, shared by the tests
// below.
var testStream = sync.OnceValue(func() (s struct {
	recs   [][]byte
	offs   []int64
	file   []byte
	z      []byte
	starts []int // compressed offsets of the members
}) {
	rng := rand.New(rand.NewPCG(7, 8))
	s.recs = textRecords(rng, 600, 6000)
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{})
	for _, r := range s.recs {
		off, _ := w.WriteRecord(r)
		s.offs = append(s.offs, off)
	}
	w.Close()
	s.file = buf.Bytes()
	cuts := []int{0, int(s.offs[200]), int(s.offs[400]) + 5, len(s.file)}
	for i := range 3 {
		s.starts = append(s.starts, len(s.z))
		s.z = append(s.z, codectest.Gzip(s.file[cuts[i]:cuts[i+1]])...)
	}
	return s
})

// readAll reads every record of recs through in, checking each against
// want, and returns how many did not read (with an error matching
// codec.ErrCorrupt; any other error or wrong bytes fail the test).
func readAll(t *testing.T, in io.ReaderAt, recs []Record, want [][]byte) int {
	t.Helper()
	bad := 0
	for i, r := range recs {
		p := make([]byte, r.Len)
		_, err := ReadRecord(in, r, p, 0)
		switch {
		case err == nil && !bytes.Equal(p, want[i]):
			t.Fatalf("record %d read back other bytes", i)
		case err != nil && !errors.Is(err, codec.ErrCorrupt) && !errors.Is(err, ErrStoredWindow):
			t.Fatalf("record %d: %v, want a corruption or stored-window error", i, err)
		case err != nil:
			bad++
		}
	}
	return bad
}

// TestInflatedParallelAndSequential: readers in parallel read the right
// bytes, and a reader going through the stream in order decompresses it
// once (paused decoders go on where the last read stopped).
func TestInflatedParallelAndSequential(t *testing.T) {
	t.Parallel()
	s := testStream()
	res, recs := indexAll(t, s.z, Gzip, IndexOptions{Spacing: testSpacing})
	in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), res.Index, InflatedOptions{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50 {
				i := rng.IntN(len(recs))
				p := make([]byte, recs[i].Len)
				if _, err := ReadRecord(in, recs[i], p, 0); err != nil || !bytes.Equal(p, s.recs[i]) {
					t.Errorf("record %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seq, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), res.Index, InflatedOptions{})
	r := io.NewSectionReader(seq, 0, seq.Size())
	buf := make([]byte, 100<<10)
	var got []byte
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if !bytes.Equal(got, s.file) {
		t.Fatal("the stream read in order differs from the file")
	}
	if n := seq.Decompressed(); n > int64(len(s.file))+1<<unitMax {
		t.Errorf("reading %d bytes in order decompressed %d", len(s.file), n)
	}
}

// TestInflatedRefusesWrongCheckpoints: a checkpoint moved, a window or a
// checksum changed (a planted or stale index) gives corruption errors on
// the reads that use it, never other bytes.
func TestInflatedRefusesWrongCheckpoints(t *testing.T) {
	t.Parallel()
	s := testStream()
	res, recs := indexAll(t, s.z, Gzip, IndexOptions{Spacing: testSpacing})
	block := -1
	for i, p := range res.Index.Points {
		if !p.Member {
			block = i
			break
		}
	}
	if block < 0 {
		t.Fatal("no checkpoint inside a member")
	}
	for _, tc := range []struct {
		name   string
		change func(p *Checkpoint)
	}{
		{"bit +1", func(p *Checkpoint) { p.In++ }},
		{"bit -3", func(p *Checkpoint) { p.In -= 3 }},
		{"byte +1", func(p *Checkpoint) { p.In += 8 }},
		{"window", func(p *Checkpoint) { p.Window = packWindow(bytes.Repeat([]byte("x"), p.WindowLen)) }},
		{"unit sum", func(p *Checkpoint) { p.Sums[0] ^= 1 }},
		{"member sum", func(p *Checkpoint) { p.Sum ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := *res.Index
			x.Points = append([]Checkpoint(nil), x.Points...)
			p := &x.Points[block]
			p.Sums = append([]uint32(nil), p.Sums...)
			tc.change(p)
			if err := x.Check(int64(len(s.z))); err != nil {
				t.Fatalf("the change is caught by Check (%v): it must be by reads", err)
			}
			// Backwards, so that each span's reads start at its
			// checkpoint rather than go on from the span before.
			in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), &x, InflatedOptions{})
			bad := 0
			for i := len(recs) - 1; i >= 0; i-- {
				bad += readAll(t, in, recs[i:i+1], s.recs[i:i+1])
			}
			if tc.name != "member sum" && bad == 0 {
				t.Fatal("every record read through a wrong checkpoint")
			}
			t.Logf("%d of %d records refused", bad, len(recs))
		})
	}
}

// TestIndexCompressedDamage: zero padding after the last member is not
// damage; a stream cut short keeps every record before the cut; a damaged
// member keeps the records before it and, from the next member on, after
// it; bytes between members that are not a member are skipped.
func TestIndexCompressedDamage(t *testing.T) {
	t.Parallel()
	s := testStream()
	m1, m2 := s.starts[1], s.starts[2]
	corrupt := append([]byte(nil), s.z...)
	for i := m1 + 5000; i < m1+5100; i++ {
		corrupt[i] ^= 0x55
	}
	garbage := append(append(append([]byte(nil), s.z[:m2]...), bytes.Repeat([]byte("junk"), 100)...), s.z[m2:]...)
	for _, tc := range []struct {
		name string
		z    []byte
		// records expected: [0, first) and [from, 600), damage kinds
		first, from int
		damage      bool
	}{
		{"zero padding", append(append([]byte(nil), s.z...), make([]byte, 10000)...), 600, 600, false},
		{"cut in the last member", s.z[:len(s.z)-50000], -1, 600, true},
		{"cut at a member's end", s.z[:m2], 400, 600, true},
		{"damaged member", corrupt, -1, 401, true}, // member 3 starts 5 bytes into record 400
		{"garbage between members", garbage, 600, 600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, recs := indexAll(t, tc.z, Gzip, IndexOptions{Spacing: testSpacing})
			if (len(res.Damage) > 0) != tc.damage {
				t.Fatalf("damage %v", res.Damage)
			}
			// Every record found is one of the file's, in order: which one
			// is told by its bytes (offsets after a gap are not the file's).
			in, _ := NewInflated(bytes.NewReader(tc.z), int64(len(tc.z)), res.Index, InflatedOptions{})
			var got []int
			k := 0
			for i, r := range recs {
				p := make([]byte, r.Len)
				if _, err := ReadRecord(in, r, p, 0); err != nil {
					t.Fatalf("record %d found at %+v does not read: %v", i, r, err)
				}
				for k < len(s.recs) && !bytes.Equal(s.recs[k], p) {
					k++
				}
				if k == len(s.recs) {
					t.Fatalf("record %d found at %+v is none of the file's next records", i, r)
				}
				got = append(got, k)
				k++
			}
			first := tc.first
			if first < 0 {
				first = 1 // at least the first record
			}
			has := map[int]bool{}
			for _, k := range got {
				has[k] = true
			}
			for k := range first {
				if !has[k] {
					t.Fatalf("record %d before the damage is missing (%d records found, damage %v)", k, len(recs), res.Damage)
				}
			}
			for k := tc.from; k < len(s.recs); k++ {
				if !has[k] {
					t.Fatalf("record %d after the damage is missing (%d records found, damage %v)", k, len(recs), res.Damage)
				}
			}
			t.Logf("%d records, damage %v", len(recs), res.Damage)
		})
	}
}

// growing returns a gzip stream of recs written with a flush after every
// 50 records, as a writer of a shard still being written leaves it.
func growing(recs [][]byte) []byte {
	frames := make([][]byte, len(recs))
	for i, r := range recs {
		frames[i] = AppendRecord(nil, r)
	}
	return codectest.GzipFlushed(frames, 50)
}

// TestIndexCompressedExtend: a pass over a grown file that starts from the
// earlier pass's index (From, Resume) reads only what follows its last
// checkpoint, and finds what a pass over the whole file finds.
func TestIndexCompressedExtend(t *testing.T) {
	t.Parallel()
	s := testStream()
	z := growing(s.recs)
	full, want := indexAll(t, z, Gzip, IndexOptions{Spacing: testSpacing})
	for _, cut := range []int{len(z) / 3, len(z) - 1000, len(z) / 2} {
		part, first := indexAll(t, z[:cut], Gzip, IndexOptions{Spacing: testSpacing})
		cr := &countingAt{r: bytes.NewReader(z)}
		var more []Record
		res, err := IndexCompressed(context.Background(), cr, int64(len(z)), Gzip, IndexOptions{From: part.Index, Resume: part.Info.LastEnd}, func(r Record) bool {
			more = append(more, r)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Index.Check(int64(len(z))); err != nil {
			t.Fatal(err)
		}
		got := append(append([]Record(nil), first...), more...)
		if len(got) != len(want) || res.Index.Size != full.Index.Size || len(res.Damage) != 0 {
			t.Fatalf("cut at %d: %d + %d records (want %d), size %d (want %d), damage %v", cut, len(first), len(more), len(want), res.Index.Size, full.Index.Size, res.Damage)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("cut at %d: record %d at %+v, want %+v", cut, i, got[i], want[i])
			}
		}
		start := part.Index.Points[part.Index.span(part.Info.LastEnd)].In / 8
		if start == 0 {
			t.Errorf("cut at %d: the extension starts from the start of the file", cut)
		}
		if limit := int64(len(z)) - start + 2*decoderBufSize; cr.n > limit {
			t.Errorf("cut at %d: the extension read %d compressed bytes, want at most %d (from checkpoint at %d)", cut, cr.n, limit, start)
		}
		in, _ := NewInflated(bytes.NewReader(z), int64(len(z)), res.Index, InflatedOptions{})
		if bad := readAll(t, in, got, s.recs); bad > 0 {
			t.Fatalf("cut at %d: %d records do not read", cut, bad)
		}
	}
}

// TestIndexCompressedStops: a pass stops within one chunk of its context
// being canceled (here from its progress callback, after 200 KiB).
func TestIndexCompressedStops(t *testing.T) {
	t.Parallel()
	s := testStream()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cr := &countingAt{r: bytes.NewReader(s.z)}
	var at int64
	_, err := IndexCompressed(ctx, cr, int64(len(s.z)), Gzip, IndexOptions{Progress: func(done int64) {
		if done >= 200<<10 && at == 0 {
			at = done
			cancel()
		}
	}}, func(Record) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled pass: %v", err)
	}
	if cr.n > at+2*decoderBufSize {
		t.Errorf("canceled after %d compressed bytes, read %d", at, cr.n)
	}
}

// TestIndexCompressedStream: with a sequential stream the pass reads the
// file once through it and not at all through ReadAt.
func TestIndexCompressedStream(t *testing.T) {
	t.Parallel()
	s := testStream()
	cr := &countingAt{r: bytes.NewReader(s.z)}
	st := &counted{r: bytes.NewReader(s.z)}
	res, recs := indexAllFrom(t, cr, s.z, IndexOptions{Stream: st})
	if len(recs) != len(s.recs) || len(res.Damage) != 0 {
		t.Fatalf("%d records, damage %v", len(recs), res.Damage)
	}
	if cr.n != 0 || st.n != int64(len(s.z)) {
		t.Errorf("%d bytes read with ReadAt, %d of %d through the stream", cr.n, st.n, len(s.z))
	}
}

// indexAllFrom is indexAll reading through r.
func indexAllFrom(t *testing.T, r io.ReaderAt, z []byte, o IndexOptions) (IndexResult, []Record) {
	t.Helper()
	var recs []Record
	res, err := IndexCompressed(context.Background(), r, int64(len(z)), Gzip, o, func(rec Record) bool {
		recs = append(recs, rec)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, recs
}

// TestIndexCompressedLinear: indexing reads the compressed file once,
// whatever the records: large records of zeros (a thousandfold
// compression, the shape that was quadratic when every look back
// decompressed the stream from its start again) and small ones.
func TestIndexCompressedLinear(t *testing.T) {
	t.Parallel()
	zero := AppendRecord(nil, make([]byte, 1<<20))
	small := textRecords(rand.New(rand.NewPCG(3, 4)), 4000, 300)
	for name, file := range map[string][]byte{
		"1 MiB zero records": bytes.Repeat(zero, 24),
		"small records":      func() []byte { f, _ := writeAll(t, small); return f }(),
	} {
		z := codectest.Gzip(file)
		cr := &countingAt{r: bytes.NewReader(z)}
		res, recs := indexAllFrom(t, cr, z, IndexOptions{Spacing: testSpacing})
		if res.Index.Size != int64(len(file)) || len(res.Damage) != 0 || len(recs) == 0 {
			t.Fatalf("%s: %d records, size %d, damage %v", name, len(recs), res.Index.Size, res.Damage)
		}
		if limit := int64(len(z)) + 2*decoderBufSize; cr.n > limit {
			t.Errorf("%s: indexing %d compressed bytes read %d", name, len(z), cr.n)
		}
	}
}

// TestAlignedHead: a decoder started on any bit of a byte through the
// synthetic head finds the file's byte boundaries where the file has them:
// a stored block after it reads right.
func TestAlignedHead(t *testing.T) {
	t.Parallel()
	for s := uint(1); s < 8; s++ {
		// Bits 0..s-1 of the first byte are another block's; a final
		// stored block starts at bit s: BFINAL 1, BTYPE 00, then the
		// next byte boundary, LEN, NLEN and the bytes.
		file := []byte{0xa5&(1<<s-1) | 1<<s}
		if s > 5 {
			file = append(file, 0) // the header's last bits are in byte 1
		}
		file = append(file, 3, 0, 0xfc, 0xff, 'a', 'b', 'c')
		head, pre := alignedHead(s, file[0])
		if pre%8 != int64(s) || (pre+int64(8-s))%8 != 0 {
			t.Fatalf("shift %d: %d synthetic bits", s, pre)
		}
		fr := flate.NewReader(io.MultiReader(bytes.NewReader(head), bytes.NewReader(file[1:])))
		got, err := io.ReadAll(fr)
		if err != nil || string(got) != "abc" {
			t.Fatalf("shift %d: %q, %v", s, got, err)
		}
	}
}

// TestAdler32Update agrees with hash/adler32, in one call or many.
func TestAdler32Update(t *testing.T) {
	t.Parallel()
	b := make([]byte, 20000)
	rand.NewChaCha8([32]byte{1}).Read(b)
	sum := uint32(1)
	for i := 0; i < len(b); i += 777 {
		sum = adler32Update(sum, b[i:min(i+777, len(b))])
	}
	if want := adler32.Checksum(b); sum != want || adler32Update(1, b) != want {
		t.Fatalf("adler32Update = %08x, want %08x", sum, want)
	}
}

// TestIndexCompressedBombBounded: a shard holding one record of 96 MiB of
// zeros (a 100 KiB deflate bomb) is indexed, and its last bytes read,
// without allocating anything near its decompressed size. Not parallel:
// it measures the process's allocations.
func TestIndexCompressedBombBounded(t *testing.T) {
	const size = 96 << 20
	file := AppendRecord(AppendRecord(nil, []byte("before")), make([]byte, size))
	z := codectest.Gzip(file)
	file = nil
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	res, recs := indexAll(t, z, Gzip, IndexOptions{})
	runtime.ReadMemStats(&ms)
	if len(recs) != 2 || recs[1].Len != size {
		t.Fatalf("records %+v", recs)
	}
	if a := ms.TotalAlloc - before; a > 32<<20 {
		t.Errorf("indexing %d bytes (%d compressed) allocated %d bytes", size, len(z), a)
	}
	in, _ := NewInflated(bytes.NewReader(z), int64(len(z)), res.Index, InflatedOptions{})
	before = ms.TotalAlloc
	tail := make([]byte, 4096)
	if _, err := ReadRecord(in, recs[1], tail, size-4096); err != nil || !bytes.Equal(tail, make([]byte, 4096)) {
		t.Fatalf("reading the bomb's last bytes: %v", err)
	}
	runtime.ReadMemStats(&ms)
	if a := ms.TotalAlloc - before; a > cacheBehind+2*(1<<unitMax) {
		t.Errorf("reading 4 KiB of it allocated %d bytes", a)
	}
	t.Logf("%d compressed bytes, %d checkpoints, read decompressed %d bytes", len(z), len(res.Index.Points), in.Decompressed())
}

// TestInflatedStoppingRead: a read of a long span (the last bytes of a
// 32 MiB record of zeros, one checkpoint) through Stopping stops once its
// done channel closes, after at most one more chunk of output, with
// ErrStopped; a read whose done is already closed decompresses at most
// one chunk; the same Inflated then serves a whole read (its decoder went
// back to the pool sound). Not parallel: it sets a package hook.
func TestInflatedStoppingRead(t *testing.T) {
	const size = 32 << 20
	file := AppendRecord(AppendRecord(nil, []byte("before")), make([]byte, size))
	res, recs := indexAll(t, codectest.Gzip(file), Gzip, IndexOptions{})
	z := codectest.Gzip(file)
	in, err := NewInflated(bytes.NewReader(z), int64(len(z)), res.Index, InflatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const stopAt = 4 << 20
	done := make(chan struct{})
	var atStop int64 = -1
	hook := func(total int64) {
		if atStop < 0 && total >= stopAt {
			atStop = total
			close(done)
		}
	}
	decodedHook.Store(&hook)
	t.Cleanup(func() { decodedHook.Store(nil) })
	tail := make([]byte, 4096)
	_, err = ReadRecord(in.Stopping(done), recs[1], tail, size-4096)
	decodedHook.Store(nil)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped read: %v, want ErrStopped", err)
	}
	if after := in.Decompressed() - atStop; atStop < 0 || after > windowSize {
		t.Fatalf("decompressed %d bytes after done closed (at %d), want at most %d", after, atStop, windowSize)
	}
	before := in.Decompressed()
	if _, err := ReadRecord(in.Stopping(done), recs[1], tail, size-8192); !errors.Is(err, ErrStopped) {
		t.Fatalf("read with done closed: %v, want ErrStopped", err)
	}
	if n := in.Decompressed() - before; n > windowSize {
		t.Fatalf("a read with done closed decompressed %d bytes, want at most %d", n, windowSize)
	}
	if _, err := ReadRecord(in.Stopping(make(chan struct{})), recs[1], tail, size-4096); err != nil || !bytes.Equal(tail, make([]byte, 4096)) {
		t.Fatalf("whole read after the stopped ones: %v", err)
	}
}
