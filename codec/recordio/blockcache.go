package recordio

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// DefaultBlockCacheBytes is the budget of the process-wide BlockCache: the
// decoded recordio data all readers of a process may hold at once.
const DefaultBlockCacheBytes = 256 << 20

// Shapes of the decoded-data budget.
const (
	// decodePage is the unit transformed blocks are decoded, cached and
	// served in: a block is never held whole, only its recently used pages.
	decodePage = 1 << 20
	// maxCursors bounds the streaming decoders alive at once in a cache.
	maxCursors = 4
	// minStreamWindow is the smallest zstd window a stream decoder accepts
	// (the reference writer's default level uses 8 MiB).
	minStreamWindow = 8 << 20
	// cursorOverhead is what a cursor holds beside its window: a page being
	// filled and the decoder's block buffers.
	cursorOverhead = 2 * decodePage
)

// BlockCache bounds the memory that recordio readers spend on decoded and
// verified data, shared by every reader that uses it: the pages of decoded
// blocks and verified chunk payloads (an LRU, keyed by reader, so one
// reader's entries are never served to another, and entries of readers no
// longer used age out), plus a few streaming decoders ("cursors") that
// continue from where the previous read of a block stopped.
//
// The budget covers both: the decoders get windows of at most
// StreamWindow bytes each, and the LRU gets what the decoders leave. A
// block is never decoded whole; a read decodes its block's stream up to the
// page it needs. It is safe for concurrent use.
type BlockCache struct {
	mu       sync.Mutex
	budget   int64
	maxBytes int64 // LRU share of the budget
	bytes    int64
	ll       *list.List
	m        map[cacheKey]*list.Element

	window int64 // largest zstd window a cursor accepts
	slots  int   // cursors alive at once
	curs   []*blockCursor
	free   *sync.Cond // signalled when a cursor is released
	tick   uint64
	opens  atomic.Int64 // streams started (for tests)
}

// cacheKey names one cached value: a page of a decoded block or a verified
// chunk, of one reader.
type cacheKey struct {
	rd    uint64 // reader identity
	off   int64  // block (or chunk) file offset
	page  int64  // page of the decoded block
	chunk bool
}

type cacheEntry struct {
	key cacheKey
	val []byte
}

// readerIDs numbers readers, so cache entries of one never match another.
var readerIDs atomic.Uint64

var (
	defaultCacheOnce sync.Once
	defaultCache     *BlockCache
)

// DefaultBlockCache returns the process-wide cache that readers use when
// Options.Cache is nil. Its budget is DefaultBlockCacheBytes until
// SetBudget changes it.
func DefaultBlockCache() *BlockCache {
	defaultCacheOnce.Do(func() { defaultCache = NewBlockCache(DefaultBlockCacheBytes) })
	return defaultCache
}

// NewBlockCache makes a cache holding at most budget bytes of decoded data
// (values below 4 MiB are raised to 4 MiB).
func NewBlockCache(budget int64) *BlockCache {
	c := &BlockCache{ll: list.New(), m: map[cacheKey]*list.Element{}}
	c.free = sync.NewCond(&c.mu)
	c.SetBudget(budget)
	return c
}

// SetBudget changes the cache's byte budget, evicting entries as needed.
// Decoders already open keep their windows until they are next reopened.
func (c *BlockCache) SetBudget(budget int64) {
	budget = max(budget, 4<<20)
	window := max(int64(minStreamWindow), budget/8)
	slots := int(min(int64(maxCursors), max(1, budget/(2*(window+cursorOverhead)))))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget, c.window, c.slots = budget, window, slots
	c.maxBytes = max(budget-int64(slots)*(window+cursorOverhead), 2*decodePage)
	c.evictLocked()
}

// Budget returns the cache's byte budget.
func (c *BlockCache) Budget() int64 { return c.load(&c.budget) }

// StreamWindow returns the largest zstd window a decoder of this cache
// accepts; blocks compressed with a larger one are refused (ErrLimit).
func (c *BlockCache) StreamWindow() int64 { return c.load(&c.window) }

// CachedBytes returns the bytes held by the LRU now.
func (c *BlockCache) CachedBytes() int64 { return c.load(&c.bytes) }

// blockShare is how much of one decoded block the LRU keeps.
func (c *BlockCache) blockShare() int64 { return c.load(&c.maxBytes) / 4 }

// load returns *f, a field of c that c.mu guards, read under the lock.
func (c *BlockCache) load(f *int64) int64 {
	c.mu.Lock()
	v := *f
	c.mu.Unlock()
	return v
}

// get returns the cached value for k and marks it recently used.
func (c *BlockCache) get(k cacheKey) ([]byte, bool) {
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
// Values larger than the LRU's share of the budget are not stored.
func (c *BlockCache) put(k cacheKey, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(cap(v)) > c.maxBytes {
		return
	}
	if e, ok := c.m[k]; ok {
		c.bytes -= int64(cap(e.Value.(*cacheEntry).val))
		e.Value.(*cacheEntry).val = v
		c.ll.MoveToFront(e)
	} else {
		c.m[k] = c.ll.PushFront(&cacheEntry{key: k, val: v})
	}
	c.bytes += int64(cap(v))
	c.evictLocked()
}

// evictLocked drops least recently used entries until the LRU fits.
func (c *BlockCache) evictLocked() {
	for c.bytes > c.maxBytes && c.ll.Len() > 0 {
		e := c.ll.Back()
		ce := e.Value.(*cacheEntry)
		c.ll.Remove(e)
		delete(c.m, ce.key)
		c.bytes -= int64(cap(ce.val))
	}
}

// MaxEntry returns the largest value the cache keeps.
func (c *BlockCache) MaxEntry() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxBytes
}

// len reports the number of cached entries.
func (c *BlockCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
