package recordio

// Other decoders' data under the same budget. A process has one budget for
// decoded data (see DefaultBlockCache and SetBudget); decoders of other
// formats (the decompressed units of a GZIP TFRecord file) keep their
// values in the same LRU through these methods, under an owner of their
// own, so that one budget bounds them all.

// NewOwner returns a key space no reader and no other owner uses.
func (c *BlockCache) NewOwner() uint64 { return readerIDs.Add(1) }

// Get returns the value owner stored at off, and marks it recently used.
func (c *BlockCache) Get(owner uint64, off int64) ([]byte, bool) {
	return c.get(cacheKey{rd: owner, off: off, page: -1})
}

// Put stores b as owner's value at off, evicting the least recently used
// values as the budget needs; a value larger than the LRU's share of the
// budget is not stored. b must not be changed afterwards.
func (c *BlockCache) Put(owner uint64, off int64, b []byte) {
	c.put(cacheKey{rd: owner, off: off, page: -1}, b)
}

// Offer stores a copy of b as owner's value at off if it fits in what the
// LRU's share of the budget has free, evicting nothing, and reports
// whether it did. It is for values a caller has at hand anyway and may
// need again (a scan's decompressed units, read next by a reader of the
// same table), which must not push out values in use.
func (c *BlockCache) Offer(owner uint64, off int64, b []byte) bool {
	k := cacheKey{rd: owner, off: off, page: -1}
	n := int64(len(b))
	c.mu.Lock()
	_, had := c.m[k]
	room := !had && c.bytes+n <= c.maxBytes
	c.mu.Unlock()
	if !room {
		return false
	}
	v := make([]byte, len(b))
	copy(v, b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, had := c.m[k]; had || c.bytes+int64(cap(v)) > c.maxBytes {
		return false
	}
	c.m[k] = c.ll.PushFront(&cacheEntry{key: k, val: v})
	c.bytes += int64(cap(v))
	return true
}
