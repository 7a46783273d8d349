package index

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/recfs/recfs/source"
)

// DefaultFollowInterval is how often Follow looks at the source by default.
const DefaultFollowInterval = 500 * time.Millisecond

// Follow keeps the table in step with a source that other processes append
// to (a database's live write-ahead log, say) until ctx ends. Every
// interval it stats the file (a source other than a local file: asks its
// source.Stater); only when the size, mtime or identity moved does it
// Refresh (which scans just the new tail of a grown log, and moves a
// source that is not a local file to its new version). After each
// refresh that changed the table it calls changed with the record counts
// before and after, so the caller can invalidate what it showed. A record
// still being written stays out of the table until it is complete.
//
// Errors from a refresh are passed to onErr (if not nil) and following goes
// on; Follow returns ctx's error when ctx ends.
func (t *Table) Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error {
	if _, ok := t.source.(source.Stater); !t.opened && !ok {
		return errNoFile
	}
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		before := t.Len()
		var (
			ch  bool
			err error
		)
		switch {
		case !t.opened:
			ch, err = t.refreshSource(ctx) // one Stat (an HEAD) a tick
		case t.moved():
			ch, err = t.refreshSettled(ctx)
		default:
			continue
		}
		if err != nil {
			if onErr != nil && ctx.Err() == nil {
				onErr(err)
			}
			continue
		}
		if ch && changed != nil {
			changed(before, t.Len())
		}
	}
}

// moved reports, from a stat alone, whether the source may have changed
// since the table was made.
func (t *Table) moved() bool {
	s := t.s()
	fi, err := t.statPath()
	if err != nil {
		return true
	}
	if cur, err := t.curFile().Stat(); err != nil || !os.SameFile(fi, cur) {
		return true
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ctim.Nano() != s.id.ctime {
		return true
	}
	return fi.Size() != s.id.size || fi.ModTime().UnixNano() != s.id.mtime
}

// refreshSettled is Refresh for following: a rewritten or replaced source
// is rebuilt only once it has not changed for settleTime.
func (t *Table) refreshSettled(ctx context.Context) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refreshWith(ctx, settleTime)
}
