package fs

import (
	"context"
	"sync"

	"github.com/recfs/recfs/index"
)

// Group commit. The closes and fsyncs of pending files of one record
// directory that arrive while an append to it is running wait for it, then
// go together: the first of them appends the records of all (one Append, so
// one lock hold, one write and at most one sync of the source), and each
// close returns once its own record is in the file, with its own record
// number or error. An fsync of a file whose record is in already (appended
// by the close of another descriptor) joins the queue the same way and
// shares the batch's sync. Every sync of a batch starts after the batch's
// records are written and after each queued fsync arrived, so an fsync
// returns only after a sync that covers its record. A batch that fails is
// tried again one record at a time, so a record the source refuses fails
// only its own close.

// commitQueue is a record directory's queue of appends waiting for the
// one in progress.
type commitQueue struct {
	mu      sync.Mutex
	waiting []*commitReq
	leading bool // an append is in progress
}

// commitReq is one close's record in the queue, or (syncOnly) one fsync
// of a record appended before.
type commitReq struct {
	rec      []byte
	sync     bool
	syncOnly bool
	wake     chan bool // true: lead the next batch; false: done, see first and err

	first int64
	err   error
}

// commit appends rec to rd's source src as one record, together with the
// records of the closes that queue meanwhile. sync makes the source
// durable before commit returns.
func (t *Tree) commit(ctx context.Context, rd *recDir, src Records, rec []byte, sync bool) (int64, error) {
	return t.enqueue(ctx, rd, src, &commitReq{rec: rec, sync: sync})
}

// commitSync makes rd's source src durable, sharing the sync of the batch
// it joins: for a record appended earlier without a sync.
func (t *Tree) commitSync(ctx context.Context, rd *recDir, src Records) error {
	_, err := t.enqueue(ctx, rd, src, &commitReq{sync: true, syncOnly: true})
	return err
}

// enqueue queues r behind the append in progress on rd, or runs it (with
// whatever queued meanwhile) when none is, and returns r's result.
func (t *Tree) enqueue(ctx context.Context, rd *recDir, src Records, r *commitReq) (int64, error) {
	q := &rd.commits
	r.wake = make(chan bool, 1)
	q.mu.Lock()
	q.waiting = append(q.waiting, r)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		if lead = <-r.wake; !lead {
			return r.first, r.err
		}
	}
	q.mu.Lock()
	batch := q.waiting
	q.waiting = nil
	q.mu.Unlock()
	t.commitBatch(ctx, rd, src, batch)
	q.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].wake <- true // the next batch's leader
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	for _, o := range batch {
		if o != r {
			o.wake <- false
		}
	}
	return r.first, r.err
}

// commitBatch appends the records of batch and syncs the source when any
// member asks, filling in each one's result.
func (t *Tree) commitBatch(ctx context.Context, rd *recDir, src Records, batch []*commitReq) {
	// The append must finish once started: an interrupted close must not
	// leave half a record.
	ctx = context.WithoutCancel(ctx)
	var (
		recs    [][]byte
		members []*commitReq
		syncers []*commitReq
		sync    bool
	)
	for _, r := range batch {
		sync = sync || r.sync
		if r.syncOnly {
			syncers = append(syncers, r)
		} else {
			recs, members = append(recs, r.rec), append(members, r)
		}
	}
	if len(recs) == 0 {
		setErr(syncers, syncOf(src))
		return
	}
	ap, ok := src.(Appender)
	if !ok {
		setErr(batch, ErrNotSupported)
		return
	}
	first, err := ap.Append(ctx, recs, index.AppendOptions{Sync: sync})
	if err != nil && len(batch) > 1 {
		// Each on its own: one record's refusal is not the others'.
		for _, r := range members {
			r.first, r.err = ap.Append(ctx, [][]byte{r.rec}, index.AppendOptions{Sync: r.sync})
		}
		t.appended(rd)
		if len(syncers) > 0 {
			setErr(syncers, syncOf(src))
		}
		return
	}
	for i, r := range members {
		r.first, r.err = first+int64(i), err
	}
	setErr(syncers, err) // synced with the batch's records
	if err == nil {
		t.appended(rd)
	}
}

// syncOf makes src durable.
func syncOf(src Records) error {
	s, ok := src.(Syncer)
	if !ok {
		return ErrNotSupported
	}
	return s.Sync()
}

// setErr gives each of rs the result err (no record number: -1).
func setErr(rs []*commitReq, err error) {
	for _, r := range rs {
		r.first, r.err = -1, err
	}
}
