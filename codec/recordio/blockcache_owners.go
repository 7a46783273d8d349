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
