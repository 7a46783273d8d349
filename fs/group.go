package fs

import (
	"context"
	"sync"

	"github.com/recfs/recfs/index"
)

// Group commit. The closes of pending files of one record directory that
// arrive while an append to it is running wait for it, then go together:
// the first of them appends the records of all (one Append, so one lock
// hold, one write and at most one sync of the source), and each close
// returns once its own record is in the file, with its own record number
// or error. A batch that fails is tried again one record at a time, so a
// record the source refuses fails only its own close.

// commitQueue is a record directory's queue of appends waiting for the
// one in progress.
type commitQueue struct {
	mu      sync.Mutex
	waiting []*commitReq
	leading bool // an append is in progress
}

// commitReq is one close's record in the queue.
type commitReq struct {
	rec  []byte
	sync bool
	wake chan bool // true: lead the next batch; false: done, see first and err

	first int64
	err   error
}

// commit appends rec to rd's source through ap as one record, together
// with the records of the closes that queue meanwhile. sync makes the
// source durable before commit returns.
func (t *Tree) commit(ctx context.Context, rd *recDir, ap Appender, rec []byte, sync bool) (int64, error) {
	q := &rd.commits
	r := &commitReq{rec: rec, sync: sync, wake: make(chan bool, 1)}
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
	t.commitBatch(ctx, rd, ap, batch)
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

// commitBatch appends the records of batch, filling in each one's result.
func (t *Tree) commitBatch(ctx context.Context, rd *recDir, ap Appender, batch []*commitReq) {
	recs := make([][]byte, len(batch))
	sync := false
	for i, r := range batch {
		recs[i] = r.rec
		sync = sync || r.sync
	}
	// The append must finish once started: an interrupted close must not
	// leave half a record.
	ctx = context.WithoutCancel(ctx)
	first, err := ap.Append(ctx, recs, index.AppendOptions{Sync: sync})
	if err != nil && len(batch) > 1 {
		// Each on its own: one record's refusal is not the others'.
		for _, r := range batch {
			r.first, r.err = ap.Append(ctx, [][]byte{r.rec}, index.AppendOptions{Sync: r.sync})
		}
		t.appended(rd)
		return
	}
	for i, r := range batch {
		r.first, r.err = first+int64(i), err
	}
	if err == nil {
		t.appended(rd)
	}
}
