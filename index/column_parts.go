package index

// parted is an array of T kept as the columns of the parts of a parallel
// build, one after the other: joining the parts moves no value, and the
// build never doubles and copies what it holds (see column).
type parted[T any] struct {
	segs []partCol[T]
}

// partCol is one part of a parted array: its values and the index of the
// first.
type partCol[T any] struct {
	first int64
	c     column[T]
}

// len returns the number of values.
func (p *parted[T]) len() int64 {
	if len(p.segs) == 0 {
		return 0
	}
	s := &p.segs[len(p.segs)-1]
	return s.first + s.c.n
}

// seg returns the part holding value k (0 <= k < len): the last one
// whose first value is at or before k, found by bisection (a build of a
// large file joins a few parts per worker).
func (p *parted[T]) seg(k int64) *partCol[T] {
	lo, hi := 0, len(p.segs)-1
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if p.segs[m].first <= k {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return &p.segs[lo]
}

// at returns value k (0 <= k < len).
func (p *parted[T]) at(k int64) T {
	s := p.seg(k)
	return s.c.at(k - s.first)
}

// ref returns a pointer to value k (0 <= k < len), for decoding and
// tests.
func (p *parted[T]) ref(k int64) *T {
	s := p.seg(k)
	j := k - s.first
	return &s.c.chunks[j>>chunkBits][j&chunkMask]
}

// add appends v.
func (p *parted[T]) add(v T) {
	if len(p.segs) == 0 {
		p.segs = append(p.segs, partCol[T]{})
	}
	p.segs[len(p.segs)-1].c.add(v)
}

// extend appends up to n values (at least one for n > 0) and returns
// them for the caller to set, every one (see column.extend).
func (p *parted[T]) extend(n int) []T {
	if len(p.segs) == 0 {
		p.segs = append(p.segs, partCol[T]{})
	}
	return p.segs[len(p.segs)-1].c.extend(n)
}

// reserve readies room for about n values before the first is added, so
// that a large build's first chunk does not grow by doubling: at most a
// chunk, whatever n.
func (p *parted[T]) reserve(n int64) {
	if len(p.segs) > 0 || n <= 0 {
		return
	}
	p.segs = append(p.segs, partCol[T]{c: column[T]{chunks: [][]T{make([]T, 0, min(n, chunkLen))}}})
}

// join appends the values of o after p's, without copying them.
func (p *parted[T]) join(o *parted[T]) {
	base := p.len()
	for _, s := range o.segs {
		if s.c.n == 0 {
			continue
		}
		s.first += base
		if len(p.segs) == 1 && p.segs[0].c.n == 0 {
			p.segs = p.segs[:0]
		}
		p.segs = append(p.segs, s)
	}
}

// grown returns an array holding p's values that add grows without
// changing p's.
func (p *parted[T]) grown() parted[T] {
	g := parted[T]{segs: append([]partCol[T](nil), p.segs...)}
	if n := len(g.segs); n > 0 {
		g.segs[n-1].c = g.segs[n-1].c.grown()
	}
	return g
}

// each calls f with the values in order, a chunk at a time.
func (p *parted[T]) each(f func(vs []T)) {
	for i := range p.segs {
		p.segs[i].c.each(f)
	}
}
