package tfrecord

import "sync"

// Paused decoders. A read decompresses through the end of the unit that
// holds its last byte; its decoder is then kept, paused there, so that the
// read after it (a sequential reader's next) goes on from there rather
// than from the checkpoint: a file read in order is decompressed once,
// however long its spans are (a DEFLATE block, and so a span, can be
// arbitrarily long). A process keeps at most maxCursors paused decoders,
// the least recently used going first, so that their memory (a window and
// buffers, about 200 KiB each) stays bounded however many files are open.
const maxCursors = 8

// cursor is a decoder of z paused at decompressed offset pos, a unit
// boundary of span span; rest is output it decompressed past pos, from
// the checkpoint it last started at.
type cursor struct {
	z    *Inflated
	r    *reader
	span int
	pos  int64
	rest []byte
	from int
	safe int64 // it can go on up to here (the bytes it read into memory end there)
}

var cursors struct {
	mu   sync.Mutex
	list []*cursor // least recently used first
}

// takeCursor removes and returns z's paused decoder with the latest
// position in [from, pos] that can go on to need, nil if there is none.
func takeCursor(z *Inflated, from, pos, need int64) *cursor {
	cursors.mu.Lock()
	defer cursors.mu.Unlock()
	best := -1
	for i, c := range cursors.list {
		if c.z == z && c.pos >= from && c.pos <= pos && need <= c.safe && (best < 0 || c.pos > cursors.list[best].pos) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	c := cursors.list[best]
	cursors.list = append(cursors.list[:best], cursors.list[best+1:]...)
	return c
}

// putCursor keeps c, dropping the least recently used cursor when there
// are too many.
func putCursor(c *cursor) {
	cursors.mu.Lock()
	defer cursors.mu.Unlock()
	if len(cursors.list) == maxCursors {
		old := cursors.list[0]
		cursors.list = append(cursors.list[:0], cursors.list[1:]...)
		old.z.pool.Put(old.r)
	}
	cursors.list = append(cursors.list, c)
}

// smallCache is the SpanCache of an Inflated made without one: a few
// MiB, so that reads in order find the unit the read before them ended in.
type smallCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	keys  []spanKey // least recently used first
	vals  map[spanKey][]byte
	owner uint64
}

type spanKey struct {
	owner uint64
	off   int64
}

// smallCacheBytes is a smallCache's budget.
const smallCacheBytes = 4 << 20

func newSmallCache() *smallCache {
	return &smallCache{max: smallCacheBytes, vals: map[spanKey][]byte{}}
}

func (c *smallCache) NewOwner() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owner++
	return c.owner
}

func (c *smallCache) Get(owner uint64, off int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := spanKey{owner, off}
	b, ok := c.vals[k]
	if ok {
		c.touch(k)
	}
	return b, ok
}

func (c *smallCache) Put(owner uint64, off int64, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := spanKey{owner, off}
	if int64(len(b)) > c.max {
		return
	}
	if old, ok := c.vals[k]; ok {
		c.bytes -= int64(len(old))
		c.touch(k)
	} else {
		c.keys = append(c.keys, k)
	}
	c.vals[k] = b
	c.bytes += int64(len(b))
	for c.bytes > c.max {
		old := c.keys[0]
		c.keys = c.keys[1:]
		c.bytes -= int64(len(c.vals[old]))
		delete(c.vals, old)
	}
}

// touch moves k to the most recently used end.
func (c *smallCache) touch(k spanKey) {
	for i, o := range c.keys {
		if o == k {
			copy(c.keys[i:], c.keys[i+1:])
			c.keys[len(c.keys)-1] = k
			return
		}
	}
}
