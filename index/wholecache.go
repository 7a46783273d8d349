package index

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// wholeCacheBytes is the budget of wholeRecords: the whole records (a
// decompressed Prometheus WAL record, a verified etcd WAL record) that
// reads of the process keep so that a record read in pieces is decoded
// once, not once per piece.
const wholeCacheBytes = 64 << 20

// wholeRecords is the process's cache of whole records, keyed by table
// (wholeID: one table describes one version of one source, and a table
// that changes is a new one) and record number, so that an entry is never
// served for another version. Least recently used entries go first; a
// record larger than the budget is never kept.
var wholeRecords = &wholeCache{budget: wholeCacheBytes, ll: list.New(), m: map[wholeKey]*list.Element{}}

type wholeKey struct {
	id uint64 // the table's wholeID
	n  int64
}

// wholeIDs numbers the tables that read through wholeRecords.
var wholeIDs atomic.Uint64

// newWholeID returns a number no other table has.
func newWholeID() uint64 { return wholeIDs.Add(1) }

type wholeEntry struct {
	key wholeKey
	b   []byte
}

// wholeCache is an LRU of whole records under a byte budget; safe for
// concurrent use.
type wholeCache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	ll     *list.List
	m      map[wholeKey]*list.Element
}

// get returns record n of table id, loading it with load when it is not
// kept. The returned bytes are shared: callers only read them.
func (c *wholeCache) get(id uint64, n int64, load func() ([]byte, error)) ([]byte, error) {
	k := wholeKey{id, n}
	c.mu.Lock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		b := e.Value.(*wholeEntry).b
		c.mu.Unlock()
		return b, nil
	}
	c.mu.Unlock()
	b, err := load()
	if err != nil || int64(len(b)) > c.budget {
		return b, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.m[k] = c.ll.PushFront(&wholeEntry{key: k, b: b})
		c.bytes += int64(len(b))
		for c.bytes > c.budget {
			old := c.ll.Back()
			e := old.Value.(*wholeEntry)
			c.ll.Remove(old)
			delete(c.m, e.key)
			c.bytes -= int64(len(e.b))
		}
	}
	return b, nil
}

// readWhole reads bytes [off, off+len(p)) of record n of table id
// through the cache.
func readWhole(id uint64, n int64, p []byte, off int64, load func() ([]byte, error)) (int, error) {
	b, err := wholeRecords.get(id, n, load)
	if err != nil {
		return 0, err
	}
	if off >= int64(len(b)) {
		return 0, nil
	}
	return copy(p, b[off:]), nil
}
