package index

import (
	"context"
	"time"

	"github.com/recfs/recfs/source"
)

// DefaultFollowInterval is how often Follow looks at the source by default.
const DefaultFollowInterval = 500 * time.Millisecond

// Follow keeps the table in step with a source that other processes append
// to (a database's live write-ahead log, say) until ctx ends. Every
// interval it asks the source's source.Stater for the version it names now
// (for a local file: a stat of its path); only when that moved does it
// Refresh (which scans just the new tail of a grown log, and moves the
// table to another file at the path or another version of an object). After each
// refresh that changed the table it calls changed with the record counts
// before and after, so the caller can invalidate what it showed. A record
// still being written stays out of the table until it is complete.
//
// Errors from a refresh are passed to onErr (if not nil) and following goes
// on; Follow returns ctx's error when ctx ends.
func (t *Table) Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error {
	if _, ok := t.s().src.(source.Stater); !ok {
		return errStatic
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
		ch, err := t.refreshSettled(ctx) // one Stat a tick (a stat of the path, an HTTP HEAD)
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

// refreshSettled is Refresh for following: a rewritten or replaced local
// file is rebuilt only once it has not changed for settleTime.
func (t *Table) refreshSettled(ctx context.Context) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refreshWith(ctx, settleTime)
}
