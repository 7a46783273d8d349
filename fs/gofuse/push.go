package gofuse

import (
	"context"
	"io"
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

// pusher stores record bytes in the kernel's page cache ahead of a reader
// (FUSE_NOTIFY_STORE). Readers of large directories go through them in
// inode-number order (gnulib's fts, under grep -r and find, sorts entries
// of directories past 10,000 entries by inode number; fs numbers records
// consecutively, so that is also record and file order), so that is the
// order watched: when the record after the one last read from offset 0 is
// read from offset 0, the records after it are pushed from one goroutine,
// at most window records and maxBytes bytes ahead, so that their reads hit
// the page cache instead of sending a READ each. A record is pushed once
// per pass; the kernel refuses records it holds no inode for (not listed
// or looked up), and a burst stops at the first such refusal.
//
// Reads that hit the page cache send nothing, so the reader's progress
// shows only at its next READ: the pusher does not wait for it, but keeps
// pushing until it is window records or maxBytes bytes ahead of the last
// record it saw read. A pusher paced by READs would leave one READ or
// more at the end of each window, then race the reader record by record.
type pusher struct {
	t        *fs.Tree
	window   int64 // records pushed ahead of the reader
	maxBytes int   // record bytes pushed ahead of the reader
	store    func(id uint64, data []byte) fuse.Status

	mu     sync.Mutex
	dir    *recordDir // the directory being read
	last   int64      // record last read from offset 0 (-2: none)
	ahead  int64      // last record pushed or passed over
	reader int64      // last record seen read in order

	wake   chan struct{} // the reader moved on
	pushed func(int)     // tests: called with the records stored after each wake-up
}

// pushMaxRecord is the largest record pushed: larger ones are read.
const pushMaxRecord = 1 << 20

func newPusher(t *fs.Tree, window, maxBytes int) *pusher {
	return &pusher{t: t, window: int64(window), maxBytes: maxBytes, last: -2, ahead: -1, reader: -1, wake: make(chan struct{}, 1)}
}

// read is told of every READ of record n of d at offset 0.
func (p *pusher) read(d *recordDir, n int64) {
	p.mu.Lock()
	if d != p.dir {
		p.dir, p.last, p.ahead, p.reader = d, -2, -1, -1
	}
	if n <= p.last {
		// Back to an earlier record: a new pass, whose pages the kernel
		// may have dropped since the last one.
		p.ahead, p.reader = n, n
	}
	// In order: the record after the last one read, or after records
	// pushed since (their reads hit the page cache, unseen here).
	inOrder := n > p.last && p.last >= -1 && (n == p.last+1 || n-1 <= p.ahead)
	p.last = n
	if inOrder {
		p.reader = n
	}
	due := inOrder && p.ahead < n+p.window
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
		bytes, count, from := 0, 0, int64(-1)
		var dir *recordDir
		for {
			p.mu.Lock()
			if p.dir != dir {
				dir, from, bytes = p.dir, -1, 0
			}
			if p.reader != from {
				from, bytes = p.reader, 0
			}
			next := max(p.reader, p.ahead) + 1
			if next > p.reader+p.window || bytes >= p.maxBytes {
				p.mu.Unlock()
				break
			}
			p.ahead = next
			p.mu.Unlock()
			k, st := p.push(dir, next, &buf)
			if st == fuse.ENOENT {
				break // past the end, or an inode the kernel does not hold
			}
			if st == fuse.OK {
				bytes += k
				count++
			}
		}
		if p.pushed != nil {
			p.pushed(count)
		}
	}
}

// push stores record n of d whole in the kernel's page cache, through
// buf, and reports its size and the outcome: ENOENT past the directory's
// end or when the kernel holds no inode for it.
func (p *pusher) push(d *recordDir, n int64, buf *[]byte) (int, fuse.Status) {
	c := d.node.Record(n)
	a, err := p.t.Getattr(context.Background(), c)
	if err != nil {
		return 0, fuse.ENOENT
	}
	if a.Size > pushMaxRecord {
		return 0, fuse.EINVAL
	}
	if int64(cap(*buf)) < a.Size {
		*buf = make([]byte, a.Size)
	}
	b := (*buf)[:a.Size]
	k, err := p.t.ReadAt(context.Background(), c, b, 0)
	if (err != nil && err != io.EOF) || k != len(b) {
		return 0, fuse.EIO // damaged: its reader gets EIO from its own READ
	}
	return k, p.store(a.Ino, b)
}
