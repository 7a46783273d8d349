package gofuse

import (
	"context"
	"io"
	"slices"
	"sync"

	"github.com/recfs/recfs/fs"
)

// pusher stores record bytes in the kernel's page cache ahead of a reader
// (FUSE_NOTIFY_STORE). Readers of large directories go through them in
// inode-number order (gnulib's fts, under grep -r and find, sorts entries
// of directories past 10,000 entries by inode number), so that is the order
// watched: when the record after the one last read from offset 0 in that
// order is read from offset 0, the records after it are pushed from one
// goroutine, at most window records and maxBytes bytes ahead, so that
// their reads hit the page cache instead of sending a READ each. Only
// records whose inodes the kernel knows (listed or looked up, hence live
// here) can be pushed.
type pusher struct {
	t        *fs.Tree
	window   int // records pushed ahead of the reader
	maxBytes int // bytes pushed per wake-up

	mu    sync.Mutex
	live  map[uint64]*node // record nodes the kernel references, by inode number
	dirty bool             // live changed since order was built
	order []uint64         // live inode numbers, ascending
	since int              // reads since order was built
	last  int              // index of the record last read from offset 0 (-2: none)
	ahead int              // index of the last record pushed

	wake   chan int  // index of the record the reader is at
	pushed func(int) // tests: called with the records stored after each wake-up
}

func newPusher(t *fs.Tree, window, maxBytes int) *pusher {
	return &pusher{t: t, window: window, maxBytes: maxBytes, live: make(map[uint64]*node), last: -2, ahead: -1, wake: make(chan int, 1)}
}

// add records a live record node.
func (p *pusher) add(nd *node) {
	p.mu.Lock()
	p.live[nd.StableAttr().Ino] = nd
	p.dirty = true
	p.mu.Unlock()
}

// forget drops a record node the kernel forgot.
func (p *pusher) forget(nd *node) {
	ino := nd.StableAttr().Ino
	p.mu.Lock()
	if p.live[ino] == nd {
		delete(p.live, ino)
		p.dirty = true
	}
	p.mu.Unlock()
}

// read is told of every read of a record at offset 0.
func (p *pusher) read(ino uint64) {
	p.mu.Lock()
	p.since++
	// The order is rebuilt once the kernel's set of records changed and,
	// past the first build, after a quarter of them were read: a mount
	// past the inode bound changes it on every lookup, and a sort per
	// read would cost more than the round trips saved.
	if p.dirty && (len(p.order) == 0 || p.since >= len(p.live)/4) {
		p.order = p.order[:0]
		for k := range p.live {
			p.order = append(p.order, k)
		}
		slices.Sort(p.order)
		p.dirty, p.ahead, p.since = false, -1, 0
	}
	i, ok := slices.BinarySearch(p.order, ino)
	if !ok {
		i = -2
	}
	inOrder := ok && p.last == i-1
	p.last = i
	due := inOrder && p.ahead < i+p.window/2
	p.mu.Unlock()
	if !due {
		return
	}
	select {
	case p.wake <- i:
	default:
	}
}

// run pushes records ahead of the reader until done is closed.
func (p *pusher) run(done <-chan struct{}) {
	buf := make([]byte, 0, 64<<10)
	for {
		var at int
		select {
		case <-done:
			return
		case at = <-p.wake:
		}
		bytes, count := 0, 0
		for {
			p.mu.Lock()
			next := max(at, p.ahead) + 1
			if p.dirty || next > at+p.window || next >= len(p.order) || bytes >= p.maxBytes {
				p.mu.Unlock()
				break
			}
			nd, ok := p.live[p.order[next]]
			p.ahead = next
			p.mu.Unlock()
			if !ok {
				continue
			}
			a, err := p.t.Getattr(context.Background(), nd.n)
			if err != nil || a.Size > int64(p.maxBytes) {
				continue
			}
			if int64(cap(buf)) < a.Size {
				buf = make([]byte, a.Size)
			}
			buf = buf[:a.Size]
			k, err := p.t.ReadAt(context.Background(), nd.n, buf, 0)
			if (err != nil && err != io.EOF) || k != len(buf) {
				continue // damaged: its reader gets EIO from its own READ
			}
			if errno := nd.WriteCache(0, buf[:k]); errno != 0 {
				continue // forgotten by the kernel meanwhile: its reader reads
			}
			bytes += k
			count++
		}
		if p.pushed != nil {
			p.pushed(count)
		}
	}
}
