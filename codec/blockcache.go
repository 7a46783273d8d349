package codec

import (
	"container/list"
	"sync"
)

// blockCache is a small LRU of decoded blocks (or verified chunk payloads),
// bounded by entry count and by total bytes. It is safe for concurrent use.
type blockCache struct {
	mu       sync.Mutex
	maxN     int
	maxBytes int64
	bytes    int64
	ll       *list.List
	m        map[cacheKey]*list.Element
}

// cacheKey names one cached value: a decoded block or a verified chunk.
type cacheKey struct {
	off   int64
	chunk bool
}

type cacheEntry struct {
	key cacheKey
	val []byte
}

// newBlockCache makes a cache of at most n entries and maxBytes bytes
// (n <= 0 disables caching).
func newBlockCache(n int, maxBytes int64) *blockCache {
	return &blockCache{maxN: n, maxBytes: maxBytes, ll: list.New(), m: map[cacheKey]*list.Element{}}
}

// get returns the cached value for k and marks it recently used.
func (c *blockCache) get(k cacheKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheEntry).val, true
}

// put stores v under k, evicting the least recently used entries as needed.
// Values larger than the byte bound are not stored.
func (c *blockCache) put(k cacheKey, v []byte) {
	if c.maxN <= 0 || int64(len(v)) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.bytes -= int64(len(e.Value.(*cacheEntry).val))
		e.Value.(*cacheEntry).val = v
		c.bytes += int64(len(v))
		c.ll.MoveToFront(e)
	} else {
		c.m[k] = c.ll.PushFront(&cacheEntry{key: k, val: v})
		c.bytes += int64(len(v))
	}
	for c.ll.Len() > c.maxN || c.bytes > c.maxBytes {
		e := c.ll.Back()
		ce := e.Value.(*cacheEntry)
		c.ll.Remove(e)
		delete(c.m, ce.key)
		c.bytes -= int64(len(ce.val))
	}
}

// len reports the number of cached entries.
func (c *blockCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
