package index

// Record tables are kept in columns of fixed-size chunks, so that building
// one never doubles and copies what it holds: a table of n records takes
// its n values and at most one chunk more (the first chunk grows by
// doubling up to chunkLen values, so small tables stay small), while it is
// built and after. A parallel build joins its parts' columns without
// copying them (recLocs).

// Chunks of a column hold chunkLen values.
const (
	chunkBits = 16
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
)

// column is an array of T kept in chunks of chunkLen values (the last one
// possibly shorter). A column that shares its chunks with another (grown)
// may append to them: it writes only past the other's length, which the
// other never reads.
type column[T any] struct {
	chunks [][]T
	n      int64
}

// len returns the number of values.
func (c *column[T]) len() int64 { return c.n }

// at returns value i (0 <= i < len).
func (c *column[T]) at(i int64) T { return c.chunks[i>>chunkBits][i&chunkMask] }

// add appends v.
func (c *column[T]) add(v T) {
	k := int(c.n >> chunkBits)
	if k == len(c.chunks) || len(c.chunks[k]) == cap(c.chunks[k]) {
		k = c.room()
	}
	c.chunks[k] = append(c.chunks[k], v)
	c.n++
}

// room makes sure the chunk the next value goes to has room for it and
// returns its index.
func (c *column[T]) room() int {
	k := int(c.n >> chunkBits)
	if k == len(c.chunks) {
		c.chunks = append(c.chunks, nil)
	}
	if ch := c.chunks[k]; len(ch) == cap(ch) {
		// The first chunk grows by doubling; later ones are whole.
		size := chunkLen
		if k == 0 {
			size = min(chunkLen, max(16, 2*cap(ch)))
		}
		grown := make([]T, len(ch), size)
		copy(grown, ch)
		c.chunks[k] = grown
	}
	return k
}

// extend appends up to n values, at least one for n > 0, that fit in the
// chunk being filled (starting a new one as add does), and returns them
// for the caller to set, every one (what they hold before is not
// specified): a run of values costs one check of room, not one a value.
func (c *column[T]) extend(n int) []T {
	if n <= 0 {
		return nil
	}
	k := c.room()
	ch := c.chunks[k]
	m := min(n, cap(ch)-len(ch))
	c.chunks[k] = ch[:len(ch)+m]
	c.n += int64(m)
	return c.chunks[k][len(ch):]
}

// grown returns a column holding c's values that add grows without
// changing c's.
func (c *column[T]) grown() column[T] {
	return column[T]{chunks: append([][]T(nil), c.chunks...), n: c.n}
}

// reserve gives a column about to take many values its whole first chunk
// now (one copy of what that holds), so that add never doubles it: like
// every later chunk, it keeps the room it does not fill (at most one
// chunk more than the values, as for any growing column; trim gives it
// back).
func (c *column[T]) reserve() {
	switch {
	case len(c.chunks) == 0:
		c.chunks = [][]T{make([]T, 0, chunkLen)}
	case len(c.chunks) == 1 && cap(c.chunks[0]) < chunkLen:
		whole := make([]T, len(c.chunks[0]), chunkLen)
		copy(whole, c.chunks[0])
		c.chunks[0] = whole
	}
}

// trim gives the last chunk back its unused room (one copy of at most a
// chunk), for a column that is done growing.
func (c *column[T]) trim() {
	if k := len(c.chunks) - 1; k >= 0 && len(c.chunks[k]) < cap(c.chunks[k]) {
		exact := make([]T, len(c.chunks[k]))
		copy(exact, c.chunks[k])
		c.chunks[k] = exact
	}
}

// each calls f with the values in order, a chunk at a time.
func (c *column[T]) each(f func(vs []T)) {
	for _, ch := range c.chunks {
		f(ch)
	}
}

// recLocs is where a table's records are: each record's offset and
// length, in segments that follow one another (one per part of a
// parallel scan that found records; usually one).
type recLocs struct {
	segs []locSeg
}

// locSeg is a run of records: their offsets and lengths.
type locSeg struct {
	first int64 // the number of its first record
	off   column[int64]
	ln    column[uint32]
}

// len returns the number of records.
func (l *recLocs) len() int64 {
	if len(l.segs) == 0 {
		return 0
	}
	s := &l.segs[len(l.segs)-1]
	return s.first + s.off.len()
}

// seg returns the segment holding record k and k's index in it.
func (l *recLocs) seg(k int64) (*locSeg, int64) {
	i := len(l.segs) - 1
	for i > 0 && l.segs[i].first > k {
		i--
	}
	s := &l.segs[i]
	return s, k - s.first
}

// off returns the offset of record k.
func (l *recLocs) off(k int64) int64 {
	s, i := l.seg(k)
	return s.off.at(i)
}

// ln returns the length field of record k.
func (l *recLocs) ln(k int64) uint32 {
	s, i := l.seg(k)
	return s.ln.at(i)
}

// add appends a record.
func (l *recLocs) add(off int64, ln uint32) {
	if len(l.segs) == 0 {
		l.segs = append(l.segs, locSeg{})
	}
	s := &l.segs[len(l.segs)-1]
	s.off.add(off)
	s.ln.add(ln)
}

// join appends the records of o after l's, without copying them.
func (l *recLocs) join(o *recLocs) {
	base := l.len()
	for _, s := range o.segs {
		if s.off.len() == 0 {
			continue
		}
		s.first += base
		l.segs = append(l.segs, s)
	}
}

// grown returns locations holding l's records that add grows without
// changing l's.
func (l *recLocs) grown() recLocs {
	g := recLocs{segs: append([]locSeg(nil), l.segs...)}
	if n := len(g.segs); n > 0 {
		s := &g.segs[n-1]
		s.off, s.ln = s.off.grown(), s.ln.grown()
	}
	return g
}

// reserve readies the last segment to take many records (column.reserve).
func (l *recLocs) reserve() {
	if len(l.segs) == 0 {
		l.segs = append(l.segs, locSeg{})
	}
	s := &l.segs[len(l.segs)-1]
	s.off.reserve()
	s.ln.reserve()
}

// trim gives back the unused room of every segment's last chunks.
func (l *recLocs) trim() {
	for i := range l.segs {
		l.segs[i].off.trim()
		l.segs[i].ln.trim()
	}
}
