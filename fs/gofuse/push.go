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
// of directories past 10,000 entries by inode number; fs numbers records
// consecutively, so that is also record and file order), so that is the
// order watched: when the record after the one last read from offset 0 in that
// order is read from offset 0, the records after it are pushed from one
// goroutine, at most window records and maxBytes bytes ahead, so that
// their reads hit the page cache instead of sending a READ each. Only
// records whose inodes the kernel knows (listed or looked up, hence live
// here) can be pushed, and each live record at most once.
//
// Reads that hit the page cache send nothing, so the reader's progress
// shows only at its next READ: the pusher does not wait for it, but keeps
// pushing until it is window records or maxBytes bytes ahead of the last
// record it saw read. A pusher waiting for READs to pace it (the first
// version: 128 records per in-order READ) left one READ or more at the end
// of each window, then raced the reader record by record: 10-36% of the
// records of a first grep -r still came by READ.
type pusher struct {
	t        *fs.Tree
	window   int // records pushed ahead of the reader
	maxBytes int // record bytes pushed ahead of the reader

	mu     sync.Mutex
	live   map[uint64]*pushEntry // record nodes the kernel references, by inode number
	dirty  bool                  // live changed since order was built
	order  []*pushEntry          // live entries by ascending inode number
	since  int                   // reads since order was built
	last   int                   // index of the record last read from offset 0 (-2: none)
	ahead  int                   // index of the last record pushed or passed over
	reader int                   // index of the last record seen read in order

	wake   chan struct{} // the reader moved on
	pushed func(int)     // tests: called with the records stored after each wake-up
}

// pushMaxRecord is the largest record pushed: larger ones are read.
const pushMaxRecord = 1 << 20

// pushEntry is a live record node and whether it was pushed.
type pushEntry struct {
	nd     *node
	ino    uint64
	stored bool // pushed (or tried), under pusher.mu
}

func newPusher(t *fs.Tree, window, maxBytes int) *pusher {
	return &pusher{t: t, window: window, maxBytes: maxBytes,
		live: make(map[uint64]*pushEntry), last: -2, ahead: -1, reader: -1, wake: make(chan struct{}, 1)}
}

// add records a live record node.
func (p *pusher) add(nd *node) {
	ino := nd.StableAttr().Ino
	p.mu.Lock()
	p.live[ino] = &pushEntry{nd: nd, ino: ino}
	p.dirty = true
	p.mu.Unlock()
}

// forget drops a record node the kernel forgot.
func (p *pusher) forget(nd *node) {
	ino := nd.StableAttr().Ino
	p.mu.Lock()
	if e := p.live[ino]; e != nil && e.nd == nd {
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
		for _, e := range p.live {
			p.order = append(p.order, e)
		}
		slices.SortFunc(p.order, func(a, b *pushEntry) int {
			switch {
			case a.ino < b.ino:
				return -1
			case a.ino > b.ino:
				return 1
			}
			return 0
		})
		p.dirty, p.ahead, p.reader, p.since = false, -1, -1, 0
	}
	i, ok := slices.BinarySearchFunc(p.order, ino, func(e *pushEntry, ino uint64) int {
		switch {
		case e.ino < ino:
			return -1
		case e.ino > ino:
			return 1
		}
		return 0
	})
	if !ok {
		i = -2
	}
	// In order: the record after the last one read, or after records
	// pushed since (their reads hit the page cache, unseen here).
	inOrder := ok && i > p.last && p.last >= -1 && (i == p.last+1 || i-1 <= p.ahead)
	p.last = i
	if inOrder {
		p.reader = i
	}
	due := inOrder && p.ahead < i+p.window
	p.mu.Unlock()
	if !due {
		return
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run pushes records ahead of the reader until done is closed: without a
// pause while it is less than window records and maxBytes bytes ahead of
// the last record it saw read, since reads that hit the page cache send
// nothing and the reader's progress shows only at its next READ.
func (p *pusher) run(done <-chan struct{}) {
	buf := make([]byte, 0, 64<<10)
	for {
		select {
		case <-done:
			return
		case <-p.wake:
		}
		bytes, count, from := 0, 0, -1
		for {
			p.mu.Lock()
			if p.reader != from {
				from, bytes = p.reader, 0
			}
			next := max(p.reader, p.ahead) + 1
			if p.dirty || next > p.reader+p.window || next >= len(p.order) || bytes >= p.maxBytes {
				p.mu.Unlock()
				break
			}
			e := p.order[next]
			p.ahead = next
			skip := e.stored
			e.stored = true
			p.mu.Unlock()
			if skip {
				continue
			}
			if k, ok := p.push(e.nd, &buf); ok {
				bytes += k
				count++
			}
		}
		if p.pushed != nil {
			p.pushed(count)
		}
	}
}

// push stores one record whole in the kernel's page cache, through buf,
// and reports its size and whether it was stored.
func (p *pusher) push(nd *node, buf *[]byte) (int, bool) {
	a, err := p.t.Getattr(context.Background(), nd.n)
	if err != nil || a.Size > pushMaxRecord {
		return 0, false
	}
	if int64(cap(*buf)) < a.Size {
		*buf = make([]byte, a.Size)
	}
	b := (*buf)[:a.Size]
	k, err := p.t.ReadAt(context.Background(), nd.n, b, 0)
	if (err != nil && err != io.EOF) || k != len(b) {
		return 0, false // damaged: its reader gets EIO from its own READ
	}
	if errno := nd.WriteCache(0, b); errno != 0 {
		return 0, false // forgotten by the kernel meanwhile: its reader reads
	}
	return k, true
}
