package codec

import "testing"

func TestBlockCache(t *testing.T) {
	c := newBlockCache(2, 10)
	c.put(cacheKey{off: 1}, []byte("aaa"))
	c.put(cacheKey{off: 2}, []byte("bbb"))
	if _, ok := c.get(cacheKey{off: 1}); !ok { // 1 becomes most recent
		t.Fatal("1 missing")
	}
	c.put(cacheKey{off: 3}, []byte("ccc")) // evicts 2
	if _, ok := c.get(cacheKey{off: 2}); ok {
		t.Error("2 not evicted")
	}
	if _, ok := c.get(cacheKey{off: 1, chunk: true}); ok {
		t.Error("chunk key aliases block key")
	}
	c.put(cacheKey{off: 4}, []byte("0123456789")) // byte bound: evicts everything else
	if c.len() != 1 {
		t.Errorf("%d entries after a 10-byte put, want 1", c.len())
	}
	c.put(cacheKey{off: 5}, make([]byte, 11)) // too big to cache
	if _, ok := c.get(cacheKey{off: 5}); ok {
		t.Error("oversized value cached")
	}
	off := newBlockCache(0, 100)
	off.put(cacheKey{off: 1}, []byte("x"))
	if off.len() != 0 {
		t.Error("disabled cache stored a value")
	}
}
