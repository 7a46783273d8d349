package recordio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
)

func TestBlockCacheLRU(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(4 << 20)
	c.maxBytes = 10 // shrink the LRU share to test eviction by bytes
	c.put(cacheKey{rd: 1, off: 1}, make([]byte, 3))
	c.put(cacheKey{rd: 1, off: 2}, make([]byte, 3))
	if _, ok := c.get(cacheKey{rd: 1, off: 1}); !ok { // 1 becomes most recent
		t.Fatal("1 missing")
	}
	c.put(cacheKey{rd: 1, off: 3}, make([]byte, 5)) // 11 bytes: evicts 2
	if _, ok := c.get(cacheKey{rd: 1, off: 2}); ok {
		t.Error("2 not evicted")
	}
	for _, k := range []cacheKey{{rd: 1, off: 1, chunk: true}, {rd: 2, off: 1}, {rd: 1, off: 1, page: 1}} {
		if _, ok := c.get(k); ok {
			t.Errorf("%+v aliases {rd:1 off:1}", k)
		}
	}
	c.put(cacheKey{rd: 1, off: 4}, make([]byte, 10)) // evicts everything else
	if c.len() != 1 || c.CachedBytes() != 10 {
		t.Errorf("%d entries, %d bytes after a 10-byte put, want 1, 10", c.len(), c.CachedBytes())
	}
	c.put(cacheKey{rd: 1, off: 5}, make([]byte, 11)) // too big to cache
	if _, ok := c.get(cacheKey{rd: 1, off: 5}); ok {
		t.Error("oversized value cached")
	}
	if c.CachedBytes() > 10 {
		t.Errorf("cache holds %d bytes, budget 10", c.CachedBytes())
	}
}

// TestBlockCacheBudgetShape: the decoders' windows and the LRU together fit
// in the budget.
func TestBlockCacheBudgetShape(t *testing.T) {
	t.Parallel()
	for _, b := range []int64{1, 16 << 20, 64 << 20, 256 << 20, 1 << 30} {
		c := NewBlockCache(b)
		used := int64(c.slots)*(c.window+cursorOverhead) + c.maxBytes
		if c.slots < 1 || c.window < minStreamWindow || used > max(c.budget, 4<<20)+int64(c.slots)*(c.window+cursorOverhead) {
			t.Errorf("budget %d: %d cursors of window %d, LRU %d", b, c.slots, c.window, c.maxBytes)
		}
		if c.budget >= 64<<20 && used > c.budget {
			t.Errorf("budget %d: cursors and LRU need %d", c.budget, used)
		}
	}
}

// zstdFile writes a zstd recordio file with one block per item.
func zstdFile(t testing.TB, items [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Transformers: []string{"zstd"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := w.Append(it); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// scanLocs lists the item locations of a recordio file.
func scanLocs(t testing.TB, data []byte, o Options) []ItemLoc {
	t.Helper()
	s, err := NewScanner(bytes.NewReader(data), int64(len(data)), codec.RecordIO, o)
	if err != nil {
		t.Fatal(err)
	}
	var locs []ItemLoc
	for s.Next() {
		locs = append(locs, s.Item())
	}
	if s.Err() != nil || len(s.Damage()) > 0 {
		t.Fatalf("scan: %v %v", s.Err(), s.Damage())
	}
	return locs
}

// patterned returns n bytes that compress but differ per seed and offset.
func patterned(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed ^ byte(i>>12) ^ byte(i*7)
	}
	return b
}

// TestBlockCacheTwoReaders: two readers of two files with the same layout
// (same block offsets) share one cache and never see each other's bytes;
// the LRU never holds more than its share.
func TestBlockCacheTwoReaders(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(64 << 20)
	var files [2][]byte
	var items [2][][]byte
	for f := range files {
		for i := range 6 {
			items[f] = append(items[f], patterned(byte(16*f+i), 3<<20+1000))
		}
		files[f] = zstdFile(t, items[f])
	}
	locs := scanLocs(t, files[0], Options{Cache: c})
	if l1 := scanLocs(t, files[1], Options{Cache: c}); fmt.Sprint(l1) != fmt.Sprint(locs) {
		t.Fatalf("layouts differ: %v vs %v", locs, l1)
	}
	var rds [2]*Reader
	for f := range rds {
		var err error
		rds[f], err = NewReader(bytes.NewReader(files[f]), int64(len(files[f])), codec.RecordIO, []string{"zstd"}, Options{Cache: c}, 1)
		if err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for i, loc := range locs {
			for f := range rds {
				p := make([]byte, loc.Len)
				if _, err := rds[f].ReadItem(loc, p, 0); err != nil {
					t.Fatalf("round %d file %d item %d: %v", round, f, i, err)
				}
				if !bytes.Equal(p, items[f][i]) {
					t.Fatalf("round %d file %d item %d: wrong bytes", round, f, i)
				}
				if c.CachedBytes() > c.maxBytes {
					t.Fatalf("cache holds %d bytes, share %d", c.CachedBytes(), c.maxBytes)
				}
			}
		}
	}
	if c.cursors() > c.slots {
		t.Errorf("%d cursors, %d slots", c.cursors(), c.slots)
	}
}

// TestBlockCacheConcurrent: many goroutines read random ranges of several
// readers through a small cache (run with -race).
func TestBlockCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(16 << 20)
	const nfiles = 3
	var files [nfiles][]byte
	var items [nfiles][][]byte
	for f := range files {
		for i := range 4 {
			items[f] = append(items[f], patterned(byte(40*f+i), 1<<20+int(f)*70000+i*3000))
		}
		files[f] = zstdFile(t, items[f])
	}
	var rds [nfiles]*Reader
	var locs [nfiles][]ItemLoc
	for f := range rds {
		locs[f] = scanLocs(t, files[f], Options{Cache: c})
		rds[f], _ = NewReader(bytes.NewReader(files[f]), int64(len(files[f])), codec.RecordIO, []string{"zstd"}, Options{Cache: c}, 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 60 {
				f := r.IntN(nfiles)
				i := r.IntN(len(locs[f]))
				loc := locs[f][i]
				off := r.Int64N(loc.Len)
				p := make([]byte, min(loc.Len-off, 1+r.Int64N(300000)))
				if _, err := rds[f].ReadItem(loc, p, off); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(p, items[f][i][off:off+int64(len(p))]) {
					errs <- fmt.Errorf("file %d item %d at %d: wrong bytes", f, i, off)
					return
				}
				if b := c.CachedBytes(); b > c.maxBytes {
					errs <- fmt.Errorf("cache holds %d bytes, share %d", b, c.maxBytes)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.cursors() > c.slots {
		t.Errorf("%d cursors, %d slots", c.cursors(), c.slots)
	}
}

// TestBigBlockStreams: an item larger than the cache's whole budget is read
// in order in FUSE-sized pieces with one stream (linear, not quadratic), and
// read correctly at random places too.
func TestBigBlockStreams(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(16 << 20)
	item := patterned(7, 40<<20+123)
	data := zstdFile(t, [][]byte{item})
	loc := scanLocs(t, data, Options{Cache: c})[0]
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, []string{"zstd"}, Options{Cache: c}, 1)
	if err != nil {
		t.Fatal(err)
	}
	opens0 := c.opens.Load()
	p := make([]byte, 128<<10)
	for off := int64(0); off < loc.Len; off += int64(len(p)) {
		n, err := rd.ReadItem(loc, p, off)
		if err != nil && n != int(loc.Len-off) {
			t.Fatalf("read at %d: %d, %v", off, n, err)
		}
		if !bytes.Equal(p[:n], item[off:off+int64(n)]) {
			t.Fatalf("read at %d: wrong bytes", off)
		}
		if b := c.CachedBytes(); b > c.maxBytes {
			t.Fatalf("cache holds %d bytes, share %d", b, c.maxBytes)
		}
	}
	if opens := c.opens.Load() - opens0; opens != 1 {
		t.Errorf("reading in order opened the stream %d times, want 1", opens)
	}
	for _, off := range []int64{30 << 20, 1 << 20, 39<<20 + 5, 0} {
		n, err := rd.ReadItem(loc, p, off)
		if err != nil || !bytes.Equal(p[:n], item[off:off+int64(n)]) {
			t.Fatalf("random read at %d: %d, %v", off, n, err)
		}
	}
}

// TestBlockCacheOwners: values stored under an owner are found under that
// owner and offset only, and count against the same budget as decoded
// blocks.
func TestBlockCacheOwners(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(4 << 20)
	a, b := c.NewOwner(), c.NewOwner()
	if a == b {
		t.Fatalf("two owners share key %d", a)
	}
	v := make([]byte, 9)
	copy(v, "span of a")
	c.Put(a, 0, v)
	if v, ok := c.Get(a, 0); !ok || string(v) != "span of a" {
		t.Fatalf("Get(a, 0) = %q, %v", v, ok)
	}
	for _, k := range [][2]int64{{int64(b), 0}, {int64(a), 1}} {
		if _, ok := c.Get(uint64(k[0]), k[1]); ok {
			t.Errorf("Get(%d, %d) found another owner's or offset's value", k[0], k[1])
		}
	}
	if got := c.CachedBytes(); got != 9 {
		t.Errorf("CachedBytes = %d after one value", got)
	}
	big := make([]byte, c.Budget())
	c.Put(b, 0, big) // larger than the LRU's share: not stored
	if _, ok := c.Get(b, 0); ok {
		t.Error("a value larger than the budget was stored")
	}
}

// TestBlockCacheOffer: an offered value is kept (a copy) only while the
// LRU has room for it; it never evicts, and never replaces a value.
func TestBlockCacheOffer(t *testing.T) {
	t.Parallel()
	c := NewBlockCache(4 << 20)
	c.maxBytes = 10
	o := c.NewOwner()
	c.Put(o, 1, append(make([]byte, 0, 4), "abcd"...))
	b := []byte("efgh")
	if !c.Offer(o, 2, b) {
		t.Fatal("a 4-byte offer refused with 6 bytes free")
	}
	b[0] = 'x' // the cache holds a copy
	if got, ok := c.Get(o, 2); !ok || string(got) != "efgh" {
		t.Fatalf("offered value reads %q, %v", got, ok)
	}
	if c.Offer(o, 3, []byte("ijk")) {
		t.Error("a 3-byte offer taken with 2 bytes free")
	}
	if c.Offer(o, 1, []byte("zz")) {
		t.Error("an offer replaced a value")
	}
	for _, k := range []int64{1, 2} {
		if _, ok := c.Get(o, k); !ok {
			t.Errorf("value %d evicted by an offer", k)
		}
	}
	if got, _ := c.Get(o, 1); string(got) != "abcd" {
		t.Errorf("value 1 reads %q after a refused offer", got)
	}
}
