package index

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
)

// set changes value i of c, for tests that forge tables.
func (c *column[T]) set(i int64, v T) { c.chunks[i>>chunkBits][i&chunkMask] = v }

// set changes the location of record k, for tests that forge tables.
func (l *recLocs) set(k, off int64, ln uint32) {
	s, i := l.seg(k)
	s.off.set(i, off)
	s.ln.set(i, ln)
}

// flat returns l's offsets and length fields as plain slices (nil when
// empty), for comparing tables however they were built.
func (l *recLocs) flat() (offs []int64, lns []uint32) {
	for k := range l.len() {
		offs, lns = append(offs, l.off(k)), append(lns, l.ln(k))
	}
	return offs, lns
}

// values returns c's values as a plain slice (nil when empty).
func (c *column[T]) values() []T {
	var vs []T
	c.each(func(ch []T) { vs = append(vs, ch...) })
	return vs
}

// TestColumnGrowsByChunks: a column holds what was added in order, whole
// chunks after the first, and a grown copy adds without changing the
// original.
func TestColumnGrowsByChunks(t *testing.T) {
	t.Parallel()
	var c column[int64]
	const n = 3*chunkLen + 77
	for i := range int64(n) {
		c.add(i * 3)
	}
	if c.len() != n || len(c.chunks) != 4 {
		t.Fatalf("%d values in %d chunks", c.len(), len(c.chunks))
	}
	for i, ch := range c.chunks[:3] {
		if len(ch) != chunkLen || cap(ch) != chunkLen {
			t.Fatalf("chunk %d: len %d cap %d", i, len(ch), cap(ch))
		}
	}
	g := c.grown()
	for i := range int64(chunkLen) {
		g.add(-i)
	}
	for i := range int64(n) {
		if c.at(i) != i*3 || g.at(i) != i*3 {
			t.Fatalf("value %d: %d, grown %d", i, c.at(i), g.at(i))
		}
	}
	if c.len() != n || g.len() != n+chunkLen || g.at(n+5) != -5 {
		t.Fatalf("lengths %d, %d", c.len(), g.len())
	}
	c.trim()
	if last := c.chunks[3]; cap(last) != 77 {
		t.Fatalf("trimmed last chunk has room for %d", cap(last))
	}
}

// TestColumnExtend: runs of values added by extend, of any length and
// across chunk boundaries, leave a column equal to one added value by
// value, with chunks of the same sizes; a grown copy extends without
// changing the original.
func TestColumnExtend(t *testing.T) {
	t.Parallel()
	for _, runs := range [][]int{{1}, {7, 0, 9}, {200, 200, 200}, {chunkLen + 5, 3}, {chunkLen - 1, 2, chunkLen, 1}, {3 * chunkLen}} {
		var c, want column[int64]
		v := int64(0)
		for _, n := range runs {
			left := n
			for left > 0 {
				vs := c.extend(left)
				if len(vs) == 0 || len(vs) > left {
					t.Fatalf("runs %v: extend(%d) gave %d values", runs, left, len(vs))
				}
				for i := range vs {
					vs[i] = v
					want.add(v)
					v++
				}
				left -= len(vs)
			}
		}
		if c.len() != want.len() || !slices.Equal(c.values(), want.values()) || len(c.chunks) != len(want.chunks) {
			t.Fatalf("runs %v: %d values in %d chunks, want %d in %d", runs, c.len(), len(c.chunks), want.len(), len(want.chunks))
		}
		for i := range c.chunks {
			if cap(c.chunks[i]) != cap(want.chunks[i]) {
				t.Fatalf("runs %v: chunk %d has room for %d, add gives %d", runs, i, cap(c.chunks[i]), cap(want.chunks[i]))
			}
		}
		g := c.grown()
		for _, vs := range [][]int64{g.extend(chunkLen), g.extend(5)} {
			for i := range vs {
				vs[i] = -1
			}
		}
		if !slices.Equal(c.values(), want.values()) || c.len() != want.len() {
			t.Fatalf("runs %v: extending a grown copy changed the original", runs)
		}
	}
	var c column[int64]
	if vs := c.extend(0); vs != nil || c.len() != 0 {
		t.Fatalf("extend(0) gave %v", vs)
	}
}

// TestColumnReserve: a reserved column takes a whole first chunk without
// doubling it, leaves the column it was grown from as it was, and trim
// gives back the room left over.
func TestColumnReserve(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, 5, chunkLen} {
		var c column[int64]
		for i := range n {
			c.add(i)
		}
		g := c.grown()
		g.reserve()
		if cap(g.chunks[0]) != chunkLen {
			t.Fatalf("%d values: reserved first chunk has room for %d", n, cap(g.chunks[0]))
		}
		first := &g.chunks[0][:1][0]
		for i := range int64(100) {
			g.add(-i)
		}
		if n < chunkLen && &g.chunks[0][:1][0] != first {
			t.Errorf("%d values: the reserved chunk was replaced", n)
		}
		if c.len() != n || g.len() != n+100 || g.at(n+7) != -7 || (n > 0 && (c.at(n-1) != n-1 || g.at(n-1) != n-1)) {
			t.Fatalf("%d values: lengths %d, %d", n, c.len(), g.len())
		}
		g.trim()
		if last := g.chunks[len(g.chunks)-1]; len(last) != cap(last) {
			t.Errorf("%d values: trimmed last chunk %d of %d", n, len(last), cap(last))
		}
	}
}

// TestRecLocsJoin: joined segments number their records on from the ones
// before, and lookups find every record.
func TestRecLocsJoin(t *testing.T) {
	t.Parallel()
	var a, b, c, all recLocs
	for i := range int64(100000) {
		switch {
		case i < 70000:
			a.add(i, uint32(i))
		case i < 70001:
			b.add(i, uint32(i))
		default:
			c.add(i, uint32(i))
		}
	}
	all.join(&a)
	all.join(&recLocs{})
	all.join(&b)
	all.join(&c)
	if all.len() != 100000 || len(all.segs) != 3 {
		t.Fatalf("%d records in %d segments", all.len(), len(all.segs))
	}
	offs, lns := all.flat()
	for i := range offs {
		if offs[i] != int64(i) || lns[i] != uint32(i) {
			t.Fatalf("record %d at %d, %d", i, offs[i], lns[i])
		}
	}
	if !slices.Equal(offs[:3], []int64{0, 1, 2}) {
		t.Fatal("flat")
	}
}

// TestBuildAllocatesTableOnce: building the table of a log allocates, per
// record, little more than the table keeps (12 bytes a record): its
// columns grow by whole chunks, never doubling and copying, and a parallel
// build joins its parts without copying them. The rule that keeps a
// 10-million-record mount inside its memory budget (see the soak test
// TestTenMillionRecordsMemory), checked on a million records.
func TestBuildAllocatesTableOnce(t *testing.T) {
	const n = 1000000
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "%d", i)
	}
	data, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	defer func(v int64) { minPartBytes = v }(minPartBytes)
	minPartBytes = 1 << 20
	for _, parallel := range []int{1, 2, 4} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tb, err := Build(t.Context(), bytes.NewReader(data), int64(len(data)), Options{Parallel: parallel})
		runtime.ReadMemStats(&after)
		if err != nil || tb.Len() != n {
			t.Fatalf("build: %v, %d records", err, tb.Len())
		}
		per := float64(after.TotalAlloc-before.TotalAlloc) / n
		t.Logf("parallel %d: %.1f bytes allocated a record", parallel, per)
		// 12 bytes kept; about two chunks of slack a part (the first
		// one's doubling, the last one's trimming), the scanners' windows.
		if per > 12*1.15+float64(parallel)*(2<<20)/n {
			t.Errorf("parallel %d: %.1f bytes allocated a record, want about 12", parallel, per)
		}
	}
}
