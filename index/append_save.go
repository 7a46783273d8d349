package index

import (
	"context"
	"sync"
	"time"
)

// saveQuiet is how long appends must pause before the table they grew is
// saved (see appendSaver).
const saveQuiet = 250 * time.Millisecond

// appendSaver saves the table of a file that appends grow, once they
// pause. Saving encodes and writes the whole table, so saving after each
// append would make a run of appends cost the square of their number; the
// saved table is only a cache (a lost save costs a scan next time), so it
// waits until appends have been quiet for saveQuiet, or until the table is
// closed, and then saves the table as it is then.
type appendSaver struct {
	mu      sync.Mutex
	timer   *time.Timer // pending save, nil when none
	inside  bool        // an append is running (t.mu held): rescans defer their save
	pending bool        // a save is due
}

// save saves s (the table's new snapshot, t.mu held) to cf now, or later
// when an append of t made it.
func (t *Table) save(ctx context.Context, cf string, s *snapshot) {
	if !t.saver.inside {
		_ = saveCache(ctx, cf, s, t.opt) // a failure to save costs only speed next time
		return
	}
	sv := &t.saver
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.pending = true
	if sv.timer == nil {
		sv.timer = time.AfterFunc(saveQuiet, t.saveNow)
	} else {
		sv.timer.Reset(saveQuiet)
	}
}

// saveNow saves the table as it is now if a save is due.
func (t *Table) saveNow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flushSave()
}

// flushSave saves the table if a deferred save is due (t.mu held).
func (t *Table) flushSave() {
	sv := &t.saver
	sv.mu.Lock()
	due := sv.pending
	sv.pending = false
	if sv.timer != nil {
		sv.timer.Stop()
		sv.timer = nil
	}
	sv.mu.Unlock()
	if !due {
		return
	}
	s := t.s()
	if cf := cachePath(t.opt.CacheDir, s.origin); cf != "" {
		_ = saveCache(context.Background(), cf, s, t.opt)
	}
}
