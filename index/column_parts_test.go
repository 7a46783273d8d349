package index

import (
	"slices"
	"testing"
)

// flat returns p's values as a plain slice, through at.
func (p *parted[T]) flat() []T {
	var vs []T
	for k := range p.len() {
		vs = append(vs, p.at(k))
	}
	return vs
}

// TestPartedJoin: parts joined one after the other (empty ones, reserved
// ones, ones of several chunks and many small ones among them) read as
// one array through at, ref and each, share their chunks instead of
// copying them, and a grown copy adds without changing the original.
func TestPartedJoin(t *testing.T) {
	t.Parallel()
	for _, sizes := range [][]int{{0}, {5}, {0, 7}, {7, 0, 3}, {chunkLen + 3, 0, 2*chunkLen + 1, 9}, {1, chunkLen},
		{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3}} {
		var joined parted[int64]
		joined.reserve(100)
		var want []int64
		var firstChunks []*int64
		for pi, n := range sizes {
			var p parted[int64]
			if pi%2 == 1 {
				p.reserve(int64(n) + 1)
			}
			for i := range n {
				v := int64(pi)<<32 | int64(i)
				p.add(v)
				want = append(want, v)
			}
			if n > 0 {
				firstChunks = append(firstChunks, &p.segs[0].c.chunks[0][0])
			}
			joined.join(&p)
		}
		if joined.len() != int64(len(want)) || !slices.Equal(joined.flat(), want) {
			t.Fatalf("%v: %d values, want %d (equal: %v)", sizes, joined.len(), len(want), slices.Equal(joined.flat(), want))
		}
		for k, v := range want {
			if *joined.ref(int64(k)) != v {
				t.Fatalf("%v: ref(%d) = %d, want %d", sizes, k, *joined.ref(int64(k)), v)
			}
		}
		var each []int64
		joined.each(func(vs []int64) { each = append(each, vs...) })
		if !slices.Equal(each, want) {
			t.Fatalf("%v: each gives %d values, want %d", sizes, len(each), len(want))
		}
		for i, s := range joined.segs {
			if s.c.n == 0 && len(joined.segs) > 1 {
				t.Fatalf("%v: empty part %d kept among %d", sizes, i, len(joined.segs))
			}
		}
		for i, p := range firstChunks {
			if &joined.segs[i].c.chunks[0][0] != p {
				t.Fatalf("%v: part %d copied by join", sizes, i)
			}
		}
		if len(want) == 0 {
			continue
		}
		last := joined.len() - 1
		*joined.ref(last) = -1
		if joined.at(last) != -1 {
			t.Fatalf("%v: ref(%d) does not change value %d", sizes, last, last)
		}
		*joined.ref(last) = want[last]
		g := joined.grown()
		for i := range chunkLen + 2 {
			g.add(int64(-i))
		}
		if !slices.Equal(joined.flat(), want) || g.len() != joined.len()+chunkLen+2 || g.at(last) != want[last] || g.at(last+1) != 0 {
			t.Fatalf("%v: grown copy changed the original or lost values", sizes)
		}
	}
}

// TestPartedReserve: a reserved part's first chunk holds what was
// reserved (at most a chunk) and does not grow by doubling until it is
// full.
func TestPartedReserve(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 1000, chunkLen, 10 * chunkLen} {
		var p parted[uint32]
		p.reserve(n)
		p.reserve(5) // only before the first value
		room := min(n, chunkLen)
		for i := range room {
			p.add(uint32(i))
		}
		if c := cap(p.segs[0].c.chunks[0]); int64(c) != room || len(p.segs) != 1 {
			t.Fatalf("reserve(%d): first chunk of cap %d after %d values, want %d", n, c, room, room)
		}
	}
}
