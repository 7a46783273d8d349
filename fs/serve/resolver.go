package serve

import (
	"container/list"
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/recfs/recfs/fs"
)

// Defaults of a Resolver's cache.
const (
	DefaultEntries  = 4096      // names kept
	DefaultEntryTTL = time.Hour // how long a name is trusted, as a FUSE mount's kernel trusts it
)

// Resolver resolves request paths in a tree, keeping what it looked up as
// a FUSE kernel keeps its entries: for a while (TTL), a bounded number of
// them, each held in the tree ([fs.Tree.Hold]) while cached. Network
// protocols have no kernel in front of the tree: without it, every
// request would look every name up again, and in a directory tree a
// record file whose size changed would be indexed anew at each lookup.
//
// A cached entry that turns out to be gone or replaced (ESTALE from the
// tree) is dropped, and [Resolver.Do] walks the path again once, as the
// kernel does. Only mirrored directories, passed-through files and record
// directories are cached: names inside a record directory cost nothing to
// look up.
type Resolver struct {
	t   *fs.Tree
	max int
	ttl time.Duration

	mu   sync.Mutex
	lru  *list.List // of *cached, most recent first
	m    map[entryKey]*list.Element
	gone []fs.Node // dropped entries to tell the tree about, once r.mu is released
}

type entryKey struct {
	parent fs.Node
	name   string
}

type cached struct {
	k     entryKey
	n     fs.Node
	until time.Time
}

// NewResolver returns a resolver of t keeping at most max names (0:
// DefaultEntries) for ttl each (0: DefaultEntryTTL).
func NewResolver(t *fs.Tree, max int, ttl time.Duration) *Resolver {
	if max <= 0 {
		max = DefaultEntries
	}
	if ttl <= 0 {
		ttl = DefaultEntryTTL
	}
	return &Resolver{t: t, max: max, ttl: ttl, lru: list.New(), m: map[entryKey]*list.Element{}}
}

// Tree returns the tree the resolver resolves in.
func (r *Resolver) Tree() *fs.Tree { return r.t }

// Lookup finds the child called name of parent, from the cache when it
// can.
func (r *Resolver) Lookup(ctx context.Context, parent fs.Node, name string) (fs.Node, error) {
	if parent.Kind != fs.KindDir {
		return r.t.Lookup(ctx, parent, name)
	}
	k := entryKey{parent, name}
	now := time.Now()
	r.mu.Lock()
	if e, ok := r.m[k]; ok {
		c := e.Value.(*cached)
		if now.Before(c.until) {
			r.lru.MoveToFront(e)
			r.mu.Unlock()
			return c.n, nil
		}
		r.removeLocked(e)
	}
	r.unlock()
	n, err := r.t.Lookup(ctx, parent, name)
	if err != nil {
		return n, err
	}
	r.t.Hold(n)
	r.mu.Lock()
	if e, ok := r.m[k]; ok { // looked up meanwhile
		r.removeLocked(e)
	}
	r.m[k] = r.lru.PushFront(&cached{k: k, n: n, until: now.Add(r.ttl)})
	for r.lru.Len() > r.max {
		r.removeLocked(r.lru.Back())
	}
	r.unlock()
	return n, nil
}

// removeLocked drops the cached entry e; r.mu held. The caller calls
// unlock, which tells the tree.
func (r *Resolver) removeLocked(e *list.Element) {
	c := e.Value.(*cached)
	r.lru.Remove(e)
	delete(r.m, c.k)
	r.gone = append(r.gone, c.n)
}

// unlock releases r.mu and tells the tree about the entries dropped under
// it (Forget may stat the source: not under the lock).
func (r *Resolver) unlock() {
	gone := r.gone
	r.gone = nil
	r.mu.Unlock()
	for _, n := range gone {
		r.t.Forget(n)
	}
}

// Walk resolves names from the root (see [Walk]).
func (r *Resolver) Walk(ctx context.Context, names []string) (n, parent fs.Node, err error) {
	n = r.t.Root()
	parent = n
	for _, name := range names {
		c, err := r.Lookup(ctx, n, name)
		if err != nil {
			return fs.Node{}, fs.Node{}, err
		}
		parent, n = n, c
	}
	return n, parent, nil
}

// Drop forgets the cached entries along names, so that the next walk
// looks them up again.
func (r *Resolver) Drop(names []string) {
	n := r.t.Root()
	r.mu.Lock()
	defer r.unlock()
	for _, name := range names {
		e, ok := r.m[entryKey{n, name}]
		if !ok {
			return
		}
		n = e.Value.(*cached).n
		r.removeLocked(e)
	}
}

// Do walks names and calls op with the node and its parent. When the walk
// or op fails with ESTALE (a cached entry was replaced or deleted), it
// drops the path's entries and tries once more.
func (r *Resolver) Do(ctx context.Context, names []string, op func(n, parent fs.Node) error) error {
	for try := 0; ; try++ {
		n, parent, err := r.Walk(ctx, names)
		if err == nil {
			err = op(n, parent)
		}
		if err == nil || try > 0 || fs.Errno(err) != syscall.ESTALE {
			return err
		}
		r.Drop(names)
	}
}

// Close forgets every cached entry.
func (r *Resolver) Close() {
	r.mu.Lock()
	defer r.unlock()
	for r.lru.Len() > 0 {
		r.removeLocked(r.lru.Back())
	}
}
