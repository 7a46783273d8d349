package fs

import (
	"context"
	"sync"
	"time"

	"github.com/recfs/recfs/index"
)

// Follower is a source that can follow a file other processes append to.
// *index.Table implements it.
type Follower interface {
	// Follow refreshes the source every interval until ctx ends and calls
	// changed with the record counts before and after each change.
	Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error
}

var _ Follower = (*index.Table)(nil)

// Change says that records were added to (or, after a rewrite of the
// source, removed from) a record directory. Adapters use it to invalidate
// what the kernel cached: the directory's listing and attributes, the names
// of the new records (negative entries), and the .recfs and .recfs-summary
// files.
//
// When Rewritten is set the source was rewritten, truncated or replaced,
// not just appended to: every record may have changed (the source's
// generation moved, so record files opened before fail their reads), and
// adapters must also drop what the kernel cached of every existing record
// (contents, attributes and entries), not only the new names.
type Change struct {
	Dir            Node  // the record directory, as Lookup returns it
	Info           Node  // its .recfs file
	Summary        Node  // its .recfs-summary file (which exists only for some decoded views)
	OldLen, NewLen int64 // record counts before and after
	Rewritten      bool  // existing records may have changed
}

// Record returns the node of record n of the changed directory.
func (c Change) Record(n int64) Node { return Node{Kind: KindRecord, N: n, rd: c.Dir.rd} }

// Names returns the names of the records the change added, as the
// directory now lists them: the first maxNotifyNames of them, the names
// whose (negative) kernel entries adapters invalidate one by one. Beyond
// them, the negative timeout lets the kernel find the rest on its own.
func (c Change) Names() []string { return c.names(maxNotifyNames) }

// maxNotifyNames bounds Change.Names.
const maxNotifyNames = 1024

// RelistDelay is how long after a change adapters drop a directory's
// listing from the kernel a second time: a listing opened just before the
// change and read just after it fills the kernel's fresh listing cache
// with the old entries.
const RelistDelay = 200 * time.Millisecond

// names returns the names of the first max records the change added.
func (c Change) names(max int) []string {
	var out []string
	for n := c.OldLen; n < c.NewLen && len(out) < max; n++ {
		out = append(out, RecordName(n, c.NewLen))
	}
	return out
}

// following is the state of a tree whose record files are followed.
type following struct {
	interval time.Duration
	notify   func(Change)
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  map[*recDir]bool
}

// Follow makes the tree follow its record files: every record file opened
// so far, and every one opened later, is refreshed every interval (0: the
// index's default), and notify is called after each change. The returned
// stop function ends following and waits for it; call it before Close.
// Sources that cannot follow (not a Follower) are left as they are.
func (t *Tree) Follow(interval time.Duration, notify func(Change)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &following{interval: interval, notify: notify, ctx: ctx, cancel: cancel, started: map[*recDir]bool{}}
	t.mu.Lock()
	t.follow = f
	opens := append([]*recDir(nil), t.opens...)
	t.mu.Unlock()
	for _, rd := range opens {
		rd.mu.Lock()
		src := rd.src
		rd.mu.Unlock()
		if src != nil {
			t.followOpened(rd, src)
		}
	}
	return func() {
		t.mu.Lock()
		t.follow = nil
		t.mu.Unlock()
		cancel()
		f.wg.Wait()
	}
}

// followOpened starts following rd, whose source src was just opened, if
// the tree is following and rd is not followed yet.
func (t *Tree) followOpened(rd *recDir, src Records) {
	fl, ok := src.(Follower)
	if !ok {
		return
	}
	t.mu.Lock()
	f := t.follow
	if f == nil || f.started[rd] {
		t.mu.Unlock()
		return
	}
	f.started[rd] = true
	f.wg.Add(1)
	t.mu.Unlock()
	rd.mu.Lock()
	if rd.src != src || rd.doomed {
		rd.mu.Unlock()
		f.wg.Done()
		return
	}
	// Following uses the file: it stays open until following ends.
	rd.users++
	ctx, cancel := context.WithCancel(f.ctx)
	rd.stopFollow = cancel
	rd.mu.Unlock()
	dir := Node{Kind: KindRecordDir, rd: rd}
	if t.root.rd == rd {
		dir = t.root
	}
	ch := Change{Dir: dir, Info: Node{Kind: KindInfo, rd: rd}, Summary: Node{Kind: KindSummary, rd: rd}}
	ver, _ := src.(Versioned)
	var gen uint64
	if ver != nil {
		gen = ver.Generation()
	}
	go func() {
		defer f.wg.Done()
		defer t.release(rd)
		defer cancel()
		_ = fl.Follow(ctx, f.interval, func(oldLen, newLen int64) {
			rd.mu.Lock()
			rd.info = nil // .recfs is rebuilt on its next open
			rd.mu.Unlock()
			c := ch
			c.OldLen, c.NewLen = oldLen, newLen
			if ver != nil {
				g := ver.Generation()
				c.Rewritten, gen = g != gen, g
			}
			if f.notify != nil {
				f.notify(c)
			}
		}, func(err error) {
			t.Report(&OpError{Op: "follow", Path: rd.path, Name: dir.Name(), Record: -1, Off: -1, Err: err})
		})
	}()
}
