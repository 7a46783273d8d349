package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/source"
)

// gzipRecords returns recs as a gzipped TFRecord file, flushed every 64
// records (as a writer that is still writing leaves it).
func gzipRecords(recs [][]byte) []byte {
	frames := make([][]byte, len(recs))
	for i, r := range recs {
		frames[i] = tfrecord.AppendRecord(nil, r)
	}
	return codectest.GzipFlushed(frames, 64)
}

// textPayloads returns n payloads of size bytes of text that compresses
// about threefold (words and numbers, as tf.Example protos hold).
func textPayloads(n, size int) [][]byte {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	out := make([][]byte, n)
	for i := range out {
		out[i] = codectest.Text(rng, size)
	}
	return out
}

// countedSource is a source.Source of bytes in memory that counts the
// bytes read from it.
type countedSource struct {
	data []byte
	key  string
	read atomic.Int64
}

func (c *countedSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(c.data).ReadAt(p, off)
	c.read.Add(int64(n))
	return n, err
}
func (c *countedSource) Size() int64 { return int64(len(c.data)) }
func (c *countedSource) Identity() source.Identity {
	return source.Identity{Key: c.key, Version: fmt.Sprintf("size=%d", len(c.data))}
}

// TestTFRecordGzipBuildReadsOnce: indexing a gzipped TFRecord file reads
// it about once, however many records it holds. (When every look back
// decompressed the stream from its start again, the bytes read grew with
// the square of the records: 1 MiB records of zeros, 100 of them, took 9
// s and 400 took 108 s.)
func TestTFRecordGzipBuildReadsOnce(t *testing.T) {
	t.Parallel()
	zero := tfrecord.AppendRecord(nil, make([]byte, 1<<20))
	for _, n := range []int{8, 16, 32} {
		z := codectest.Gzip(bytes.Repeat(zero, n))
		src := &countedSource{data: z, key: "zeros"}
		tb, err := Build(context.Background(), src, int64(len(z)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tb.Len() != int64(n) || len(tb.Damage()) != 0 {
			t.Fatalf("%d records: table of %d, damage %v", n, tb.Len(), tb.Damage())
		}
		// The pass reads the file once; detection (twice) its head.
		if read, limit := src.read.Load(), int64(len(z))+128<<10; read > limit {
			t.Errorf("%d records of 1 MiB (%d bytes gzipped): the build read %d bytes, want at most %d", n, len(z), read, limit)
		}
	}
}

// gzipFixture is a gzipped TFRecord file of text records, about 6 MB
// decompressed (2 MB compressed).
var gzipFixture = sync.OnceValue(func() (f struct {
	recs [][]byte
	z    []byte
}) {
	f.recs = textPayloads(400, 16000)
	f.z = gzipRecords(f.recs)
	return f
})

// TestTFRecordGzipSavedIndexReads: a table loaded from the cache (sealed:
// saved by this user's recfs) is used at once, with no build and no pass
// over the file: a fresh table reading record 0 and the last record
// decompresses only the checkpoint spans that hold them, counted in
// decompressed bytes and in compressed bytes read from the source (before
// sealed tables, the first read ran a proof pass over the whole file).
// Every record reads back.
func TestTFRecordGzipSavedIndexReads(t *testing.T) {
	t.Parallel()
	f := gzipFixture()
	cache := t.TempDir()
	o := Options{CacheDir: cache}
	first := &countedSource{data: f.z, key: "mem://shard.tfrecord.gz"}
	tb, err := OpenSource(context.Background(), first, o)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() != int64(len(f.recs)) || tb.Info().Loaded != "built" {
		t.Fatalf("built %d records (%s), want %d", tb.Len(), tb.Info().Loaded, len(f.recs))
	}
	x := tb.s().tab.(*tfrTable).seek
	if len(x.Points) < 5 {
		t.Fatalf("%d checkpoints in %d bytes", len(x.Points), len(f.z))
	}
	again := &countedSource{data: f.z, key: first.key}
	tb2, err := OpenSource(context.Background(), again, o)
	if err != nil {
		t.Fatal(err)
	}
	if tb2.Info().Loaded != "cached" {
		t.Fatalf("second open: %s, want the saved table", tb2.Info().Loaded)
	}
	var inflated, compressed int64 // what the spans of the two records hold
	for _, n := range []int64{0, tb2.Len() - 1} {
		got := make([]byte, tb2.Size(n))
		if _, err := tb2.ReadAt(n, got, 0); err != nil || !bytes.Equal(got, f.recs[n]) {
			t.Fatalf("record %d: %v", n, err)
		}
		rec := tb2.s().tab.(*tfrTable).get(n)
		for i := spanOf(x, rec.Off); i <= spanOf(x, rec.End()-1); i++ {
			end := x.Size
			if i+1 < len(x.Points) {
				end = x.Points[i+1].Out
			}
			inflated += end - x.Points[i].Out
			// A decoder reads ahead to the checkpoint after the next.
			to := int64(len(f.z))
			if i+2 < len(x.Points) {
				to = x.Points[i+2].In/8 + 1024
			}
			compressed += to - x.Points[i].In/8
		}
	}
	dec := tb2.s().tab.(*tfrTable).inf.Decompressed()
	if dec > inflated {
		t.Errorf("records 0 and %d: %d bytes decompressed, want at most the %d of their spans", tb2.Len()-1, dec, inflated)
	}
	if read := again.read.Load(); read > compressed {
		t.Errorf("records 0 and %d: %d compressed bytes read of %d, want at most the %d of their spans", tb2.Len()-1, read, len(f.z), compressed)
	}
	t.Logf("%d checkpoints; records 0 and %d: %d bytes decompressed (spans %d), %d compressed read (spans %d, file %d)",
		len(x.Points), tb2.Len()-1, dec, inflated, again.read.Load(), compressed, len(f.z))
	for n := int64(0); n < tb2.Len(); n += 7 {
		got := make([]byte, tb2.Size(n))
		if _, err := tb2.ReadAt(n, got, 0); err != nil || !bytes.Equal(got, f.recs[n]) {
			t.Fatalf("record %d: %v", n, err)
		}
	}
}

// spanOf returns the checkpoint span of x holding decompressed offset off.
func spanOf(x *tfrecord.SeekIndex, off int64) int {
	return sort.Search(len(x.Points), func(i int) bool { return x.Points[i].Out > off }) - 1
}

// builtGzip builds the table of the gzip fixture under key with o, and
// returns it with the index of a checkpoint in its middle that is not at a
// member header.
func builtGzip(t *testing.T, key string, o Options) (*countedSource, *snapshot, int) {
	t.Helper()
	src := &countedSource{data: gzipFixture().z, key: key}
	tb, err := OpenSource(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	x := tb.s().tab.(*tfrTable).seek
	k := len(x.Points) / 2
	for x.Points[k].Member {
		k++
	}
	return src, tb.s(), k
}

// plantMoved saves (sealed with key, unless nil) the table of s with its
// checkpoint k moved a byte on, as the saved table of src; it returns the
// checkpoint's new bit offset.
func plantMoved(t *testing.T, s *snapshot, k int, src *countedSource, o Options, key []byte) int64 {
	t.Helper()
	tt := s.tab.(*tfrTable)
	x := *tt.seek
	x.Points = append([]tfrecord.Checkpoint(nil), x.Points...)
	x.Points[k].In += 8
	ps := *s
	ps.tab = &tfrTable{locs: tt.locs, side: tt.side, resume: tt.resume, comp: tt.comp, dsize: tt.dsize, seek: &x}
	var b bytes.Buffer
	if err := encodeCacheTo(&b, &ps, o, 1<<40, key); err != nil {
		t.Fatal(err)
	}
	if _, err := writeCacheFile(versionCachePath(o.CacheDir, src.Identity()), b.Bytes()); err != nil {
		t.Fatal(err)
	}
	return x.Points[k].In
}

// readRightOrRefused reads every step-th record of tb backwards (so that
// each span's reads start at its checkpoint rather than go on from the
// span before) and fails the test unless each gives the fixture's bytes
// or a corruption error; it returns how many were refused.
func readRightOrRefused(t *testing.T, tb *Table, step int64) int {
	t.Helper()
	recs := gzipFixture().recs
	refused := 0
	for n := tb.Len() - 1; n >= 0; n -= step {
		got := make([]byte, tb.Size(n))
		_, err := tb.ReadAt(n, got, 0)
		switch {
		case err == nil && !bytes.Equal(got, recs[n]):
			t.Fatalf("record %d gave other bytes", n)
		case err != nil && !errors.Is(err, codec.ErrCorrupt):
			t.Fatalf("record %d: %v, want a corruption error", n, err)
		case err != nil:
			refused++
		}
	}
	return refused
}

// TestTFRecordGzipPlantedCheckpoint: a saved table whose checkpoint was
// moved (its cache file's checksum made right again, as a hostile or stale
// cache could be) never serves other bytes: the proof that runs before the
// first record is served replaces the saved checkpoints by its own, or the
// table is not used.
func TestTFRecordGzipPlantedCheckpoint(t *testing.T) {
	t.Parallel()
	o := Options{CacheDir: t.TempDir()}
	src, s, k := builtGzip(t, "mem://planted.tfrecord.gz", o)
	moved := plantMoved(t, s, k, src, o, nil)
	tb2, err := OpenSource(context.Background(), &countedSource{data: src.data, key: src.key}, o)
	if err != nil {
		t.Fatal(err)
	}
	refused := readRightOrRefused(t, tb2, 3)
	if tb2.Info().Loaded == "cached" {
		for _, c := range tb2.s().tab.(*tfrTable).seek.Points {
			if c.In == moved {
				t.Fatal("the planted checkpoint is still in use after the table was proven")
			}
		}
	}
	t.Logf("%s table, %d records refused", tb2.Info().Loaded, refused)
}

// TestTFRecordGzipSealedTableChecked: a table believed without a proof
// (sealed, cache_vouch.go) still never serves other bytes: when it is
// wrong (a checkpoint moved, as a bug could save it) or the source changed
// under its identity (stale), the spans that do not match their unit
// checksums give corruption errors, and the rest read right.
func TestTFRecordGzipSealedTableChecked(t *testing.T) {
	t.Parallel()
	for _, moved := range []bool{true, false} {
		t.Run(map[bool]string{true: "moved checkpoint", false: "stale source"}[moved], func(t *testing.T) {
			t.Parallel()
			o := Options{CacheDir: t.TempDir()}
			src, s, k := builtGzip(t, "mem://sealed.tfrecord.gz", o)
			data := src.data
			if moved {
				plantMoved(t, s, k, src, o, cacheKey(o.CacheDir, true))
			} else {
				data = bytes.Clone(data)
				data[s.tab.(*tfrTable).seek.Points[k].In/8+100] ^= 0x10
			}
			believedRefuses(t, data, src.key, o)
		})
	}
}

// TestTFRecordGzipFollow: a gzip shard that grows (a writer appending
// flushed members' data) is taken in by Refresh, which extends its table
// from the last checkpoint: the records are those of a fresh build, and
// the generation stays.
func TestTFRecordGzipFollow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := textPayloads(600, 5000)
	z := gzipRecords(recs)
	cut := len(z) * 2 / 3
	tb, path := openNamed(t, "growing.tfrecord.gz", z[:cut], Options{CacheDir: "-"})
	before, gen := tb.Len(), tb.Generation()
	if before == 0 || before >= int64(len(recs)) || len(tb.Damage()) == 0 {
		t.Fatalf("cut file: %d records, damage %v", before, tb.Damage())
	}
	fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fh.Write(z[cut:])
	fh.Close()
	if changed, err := tb.Refresh(ctx); err != nil || !changed {
		t.Fatalf("Refresh: %v, %v", changed, err)
	}
	if tb.Len() != int64(len(recs)) || len(tb.Damage()) != 0 || tb.Generation() != gen || tb.Info().Loaded != "built" {
		t.Fatalf("grown file: %d records (want %d), damage %v, generation %d (was %d)", tb.Len(), len(recs), tb.Damage(), tb.Generation(), gen)
	}
	for n := int64(0); n < tb.Len(); n += 5 {
		if !bytes.Equal(readRecord(t, tb, n), recs[n]) {
			t.Fatalf("record %d differs", n)
		}
	}
}

// TestTFRecordGzipProgress: building a compressed file's table reports
// its progress in compressed bytes, as other formats report file bytes:
// increasing, ending at the file's size.
func TestTFRecordGzipProgress(t *testing.T) {
	t.Parallel()
	f := gzipFixture()
	var mu sync.Mutex
	var seen []int64
	_, err := Build(context.Background(), &countedSource{data: f.z, key: "p"}, int64(len(f.z)), Options{Progress: func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if total != int64(len(f.z)) {
			t.Errorf("progress total %d, want %d", total, len(f.z))
		}
		seen = append(seen, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 3 || seen[len(seen)-1] != int64(len(f.z)) {
		t.Fatalf("progress %v over %d bytes", seen, len(f.z))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("progress went back: %v", seen)
		}
	}
}

// hookedSource is a countedSource that calls hook (once, when set) at
// its first read past offset from.
type hookedSource struct {
	countedSource
	from int64
	once sync.Once
	hook func()
}

func (h *hookedSource) ReadAt(p []byte, off int64) (int, error) {
	if h.hook != nil && off+int64(len(p)) > h.from {
		h.once.Do(h.hook)
	}
	return h.countedSource.ReadAt(p, off)
}

// TestTFRecordGzipReadStopsAtClose: a read that decompresses a long span
// (64 MiB of zeros in one record, a few KiB compressed) stops when the
// table is closed meanwhile (as at an unmount), with an error that
// matches context.Canceled (EINTR), instead of decompressing on. The
// hook closes the table from inside the read's fetch of the span.
func TestTFRecordGzipReadStopsAtClose(t *testing.T) {
	t.Parallel()
	const big = 64 << 20
	z := codectest.Gzip(append(tfrecord.AppendRecord(nil, []byte("first")), tfrecord.AppendRecord(nil, make([]byte, big))...))
	src := &hookedSource{countedSource: countedSource{data: z, key: "mem://zeros.tfrecord.gz"}, from: int64(len(z)) / 2}
	tb, err := OpenSource(context.Background(), src, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 2 {
		t.Fatalf("%d records", tb.Len())
	}
	closed := false
	src.hook = func() { tb.Close(); closed = true }
	p := make([]byte, 16)
	_, err = tb.ReadAt(1, p, big-16)
	if !closed {
		t.Fatal("the hook did not run: the read did not fetch the span")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read of the record's end after Close: %v, want context.Canceled", err)
	}
	if n := tb.s().tab.(*tfrTable).inf.Decompressed(); n >= big {
		t.Fatalf("%d bytes decompressed after Close", n)
	}
}

// BenchmarkTFRecordGzipShuffledReads reads records of a gzip shard (about
// 24 MiB of text records of 8 KiB) in shuffled order, each through a table
// loaded from the saved (sealed) index, as `recfs cat` of shuffled records
// does in a fresh process: bytes are the records' payload.
func BenchmarkTFRecordGzipShuffledReads(b *testing.B) {
	recs := textPayloads(3000, 8<<10)
	z := gzipRecords(recs)
	path := filepath.Join(b.TempDir(), "shard.tfrecord.gz")
	if err := os.WriteFile(path, z, 0o644); err != nil {
		b.Fatal(err)
	}
	o := Options{CacheDir: b.TempDir()}
	tb, err := Open(context.Background(), path, o)
	if err != nil {
		b.Fatal(err)
	}
	tb.Close()
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(recs))[:200]
	b.SetBytes(int64(len(order)) * 8 << 10)
	p := make([]byte, 8<<10)
	for b.Loop() {
		tb, err := Open(context.Background(), path, o)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range order {
			if _, err := tb.ReadAt(int64(n), p, 0); err != nil {
				b.Fatal(err)
			}
		}
		tb.Close()
	}
}

// windowsInMemory counts the checkpoints of x whose window is in memory:
// held since the table was made or loaded, or read since from the saved
// table's file.
func windowsInMemory(x *tfrecord.SeekIndex) (held, read int) {
	for _, p := range x.Points {
		switch {
		case len(p.Window) > 0:
			held++
		case p.Stored != nil && p.Stored.Loaded():
			read++
		}
	}
	return held, read
}

// savedGzipTable is the gzip fixture's table built and saved (sealed) in
// a new cache directory.
type savedGzipTable struct {
	o    Options
	src  *countedSource
	x    *tfrecord.SeekIndex // its checkpoints
	k    int                 // one in the middle, not at a member header
	cf   string              // the cache file
	b    []byte              // its bytes
	blob int64               // the length of its blob region
}

// savedGzip builds and saves the gzip fixture's table under key.
func savedGzip(t *testing.T, key string) savedGzipTable {
	t.Helper()
	f := savedGzipTable{o: Options{CacheDir: t.TempDir()}}
	var s *snapshot
	f.src, s, f.k = builtGzip(t, key, f.o)
	f.x = s.tab.(*tfrTable).seek
	f.cf = versionCachePath(f.o.CacheDir, f.src.Identity())
	var err error
	if f.b, err = os.ReadFile(f.cf); err != nil {
		t.Fatal(err)
	}
	f.blob = int64(binary.LittleEndian.Uint64(f.b[len(f.b)-cacheTrailer:]))
	return f
}

// TestTFRecordGzipSavedWindowsLazy: loading the saved table of a gzip
// file reads no checkpoint window: they lie in the cache file's blob
// region, outside the part loaded (most of the table's bytes), and a read
// reads only the window of the checkpoint it starts from. Opening, which
// checks records 0 and the last, and reading them read at most the
// windows of their spans' checkpoints, not the others. (Before, every
// window was decoded into memory at load.)
func TestTFRecordGzipSavedWindowsLazy(t *testing.T) {
	t.Parallel()
	f := savedGzip(t, "mem://lazy.tfrecord.gz")
	o, src, x, b, blob := f.o, f.src, f.x, f.b, f.blob
	windows := int64(0)
	for _, p := range x.Points {
		windows += int64(len(p.Window))
	}
	if blob != windows {
		t.Fatalf("blob region of %d bytes, the windows are %d", blob, windows)
	}
	body := int64(len(b)) - blob - cacheTrailer
	if body*2 > int64(len(b)) {
		t.Fatalf("the part read at load is %d of the table's %d bytes", body, len(b))
	}
	tb, err := OpenSource(context.Background(), &countedSource{data: src.data, key: src.key}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "cached" {
		t.Fatalf("%s table, want the saved one", tb.Info().Loaded)
	}
	lx := tb.s().tab.(*tfrTable).seek
	recs := gzipFixture().recs
	spans := map[int]bool{}
	for _, n := range []int64{0, tb.Len() - 1} {
		got := make([]byte, tb.Size(n))
		if _, err := tb.ReadAt(n, got, 0); err != nil || !bytes.Equal(got, recs[n]) {
			t.Fatalf("record %d: %v", n, err)
		}
		rec := tb.s().tab.(*tfrTable).get(n)
		for i := spanOf(lx, rec.Off); i <= spanOf(lx, rec.End()-1); i++ {
			spans[i] = true
		}
	}
	held, read := windowsInMemory(lx)
	if held != 0 || read > len(spans) {
		t.Fatalf("after reading records 0 and %d (%d spans): %d windows loaded with the table, %d read since, of %d checkpoints",
			tb.Len()-1, len(spans), held, read, len(lx.Points))
	}
	t.Logf("table %d bytes, %d read at load; %d of %d windows read for records 0 and %d", len(b), body, read, len(lx.Points), tb.Len()-1)
	if n := readRightOrRefused(t, tb, 5); n != 0 {
		t.Fatalf("%d records refused", n)
	}
}

// believedRefuses opens the table of the gzip fixture's bytes data under
// key, which must be the sealed table saved in o's cache directory,
// believed without a proof, and fails the test unless every record reads
// right or is refused, and some are.
func believedRefuses(t *testing.T, data []byte, key string, o Options) {
	t.Helper()
	tb, err := OpenSource(context.Background(), &countedSource{data: data, key: key}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "cached" || tb.s().proof != nil {
		t.Fatalf("%s table, proof %v: want the sealed table believed", tb.Info().Loaded, tb.s().proof)
	}
	refused := readRightOrRefused(t, tb, 1)
	if refused == 0 {
		t.Fatal("no record refused")
	}
	t.Logf("%d of %d records refused", refused, tb.Len())
}

// TestTFRecordGzipOldTableRebuilt: a table saved by the format before
// stored windows (cache version 8, windows inline: testdata, saved by
// that version for this source) is not misread: it is rebuilt, and every
// record reads right.
func TestTFRecordGzipOldTableRebuilt(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(filepath.Join("testdata", "tfrecord-gzip-v8.idx"))
	if err != nil {
		t.Fatal(err)
	}
	recs := textPayloads(200, 4000)
	src := &countedSource{data: gzipRecords(recs), key: "mem://v8.tfrecord.gz"}
	d := decoder{b: old}
	if d.str() != cacheMagic || d.u32() != 8 || d.identity() != sourceIdent(src.Identity(), src.Size()) {
		t.Fatal("the old table is not a version 8 table of this source")
	}
	o := Options{CacheDir: t.TempDir()}
	if _, err := writeCacheFile(versionCachePath(o.CacheDir, src.Identity()), old); err != nil {
		t.Fatal(err)
	}
	tb, err := OpenSource(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "built" || tb.Len() != int64(len(recs)) {
		t.Fatalf("%s table of %d records, want %d built", tb.Info().Loaded, tb.Len(), len(recs))
	}
	for n := range tb.Len() {
		got := make([]byte, tb.Size(n))
		if _, err := tb.ReadAt(n, got, 0); err != nil || !bytes.Equal(got, recs[n]) {
			t.Fatalf("record %d: %v", n, err)
		}
	}
}
