package index

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
)

// gateSource is a countedSource whose reads, once armed, wait until two
// of them are in progress at once: the first waits for a second (at most
// gateGuard, then the test fails), and from then on reads pass.
type gateSource struct {
	countedSource
	armed   atomic.Bool
	mu      sync.Mutex
	arrived int
	met     chan struct{}
	// together says the second read came while the first waited.
	together atomic.Bool
}

// gateGuard bounds how long the first read waits for a second one. It is
// only reached when no second read comes: a failure.
const gateGuard = 20 * time.Second

func (g *gateSource) ReadAt(p []byte, off int64) (int, error) {
	if g.armed.Load() {
		g.mu.Lock()
		g.arrived++
		first := g.arrived == 1
		if g.arrived == 2 {
			close(g.met)
		}
		g.mu.Unlock()
		if first {
			select {
			case <-g.met:
				g.together.Store(true)
			case <-time.After(gateGuard):
			}
		}
	}
	return g.countedSource.ReadAt(p, off)
}

// aheadOrder returns records of the gzip fixture in an order where each
// record's span differs from the one before it (records far apart).
func aheadOrder(n int64) []int64 {
	var order []int64
	for i := int64(0); i < n/2; i += 5 {
		order = append(order, n-1-i, i)
	}
	return order
}

// readInOrder ranges over recs, reading each record of tb, and returns the
// records in the order they came with their bytes (nil where the read
// failed) and errors.
func readInOrder(tb *Table, recs func(func(int64) bool)) (got []int64, data [][]byte, errs []error) {
	for n := range recs {
		b := make([]byte, tb.Size(n))
		_, err := tb.ReadAt(n, b, 0)
		if err != nil {
			b = nil
		}
		got, data, errs = append(got, n), append(data, b), append(errs, err)
	}
	return got, data, errs
}

// TestReadAheadConcurrent: ReadAhead over a compressed file's table reads
// records of different spans at once (the source's reads meet at a gate
// that lets the first through only when a second is in progress: with
// reads one at a time the gate never opens), and yields the records in
// the order given, each reading back the file's bytes.
func TestReadAheadConcurrent(t *testing.T) {
	t.Parallel()
	f := gzipFixture()
	src := &gateSource{countedSource: countedSource{data: f.z, key: "mem://ahead.tfrecord.gz"}, met: make(chan struct{})}
	tb, err := OpenSource(context.Background(), src, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	order := aheadOrder(tb.Len())
	src.armed.Store(true)
	got, data, errs := readInOrder(tb, tb.ReadAhead(context.Background(), slices.Values(order), 2))
	if !src.together.Load() {
		t.Fatal("no two reads of the source were in progress at once")
	}
	if !slices.Equal(got, order) {
		t.Fatalf("records yielded %v, want %v", got, order)
	}
	for i, n := range got {
		if errs[i] != nil || !bytes.Equal(data[i], f.recs[n]) {
			t.Fatalf("record %d: %v or other bytes", n, errs[i])
		}
	}
}

// TestReadAheadRefuses: with a sealed table whose checkpoint was moved
// (believed without a proof), reads through ReadAhead give each record
// its bytes or a corruption error at that record, never other bytes, and
// the records the moved checkpoint's span holds are refused.
func TestReadAheadRefuses(t *testing.T) {
	t.Parallel()
	o := Options{CacheDir: t.TempDir()}
	src, s, k := builtGzip(t, "mem://ahead-planted.tfrecord.gz", o)
	plantMoved(t, s, k, src, o, cacheKey(o.CacheDir, true))
	tb, err := OpenSource(context.Background(), &countedSource{data: src.data, key: src.key}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Info().Loaded != "cached" {
		t.Fatalf("%s table, want the sealed one", tb.Info().Loaded)
	}
	got, data, errs := readInOrder(tb, tb.ReadAhead(context.Background(), slices.Values(aheadOrder(tb.Len())), 2))
	refused := 0
	for i, n := range got {
		switch {
		case errs[i] == nil && !bytes.Equal(data[i], gzipFixture().recs[n]):
			t.Fatalf("record %d gave other bytes", n)
		case errs[i] != nil && !errors.Is(errs[i], codec.ErrCorrupt):
			t.Fatalf("record %d: %v, want a corruption error", n, errs[i])
		case errs[i] != nil:
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no record refused")
	}
	t.Logf("%d of %d records refused", refused, len(got))
}

// TestReadAheadStops: when ctx ends, the sequence still yields every
// record (reads go on one at a time); a caller that stops ranging returns
// with the workers done. A table of an uncompressed file gets its
// sequence back as it is.
func TestReadAheadStops(t *testing.T) {
	t.Parallel()
	f := gzipFixture()
	tb, err := OpenSource(context.Background(), &countedSource{data: f.z, key: "mem://ahead-stop.tfrecord.gz"}, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	order := aheadOrder(tb.Len())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int64
	for n := range tb.ReadAhead(ctx, slices.Values(order), 2) {
		cancel()
		got = append(got, n)
	}
	if !slices.Equal(got, order) {
		t.Fatalf("after cancel: %d records yielded, want %d", len(got), len(order))
	}
	k := 0
	for range tb.ReadAhead(context.Background(), slices.Values(order), 2) {
		if k++; k == 3 {
			break
		}
	}
	if k != 3 {
		t.Fatalf("%d records before the break", k)
	}
}
