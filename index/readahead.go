package index

import (
	"context"
	"iter"
	"sync"
)

// Read-ahead of a compressed TFRecord file's records. Each read of such a
// record decompresses from the checkpoint before it (a few hundred KiB);
// a reader that knows which records it will read, in which order (recfs
// cat of a selection), hands them to ReadAhead, whose workers read them
// ahead of it, several spans at once, so that the decompression runs on
// every core while the reader writes out what is ready. The workers' reads
// are ordinary Table reads: what they decompress is checked against the
// checkpoints' unit checksums and kept in the decoded-data cache, where the
// reader's own read of the record finds it. A worker's failed read is
// dropped: the reader's read of that record fails the same way, in order.

// aheadPerWorker is how many records ReadAhead lets its workers read ahead
// of the reader, per worker; aheadMaxRecord is the largest record they
// read (larger ones are left to the reader, which streams them). With the
// units around each record cached, the records read ahead hold at most
// workers × aheadPerWorker × (aheadMaxRecord + 2 units) of the cache.
const (
	aheadPerWorker = 4
	aheadMaxRecord = 1 << 20
)

// ReadAhead returns recs, the records the caller is about to read in that
// order (each whole, from its first byte), as a sequence that yields the
// same records in the same order. For the table of a compressed TFRecord
// file, up to workers goroutines read the records while the caller reads
// what the sequence yielded before them, at most aheadPerWorker records
// per worker ahead of it; for every other table the sequence is recs
// itself. The workers stop reading ahead when ctx ends (the sequence still
// yields every record) and when the caller stops ranging over the
// sequence, which returns only once they have.
func (t *Table) ReadAhead(ctx context.Context, recs iter.Seq[int64], workers int) iter.Seq[int64] {
	sr, ok := t.s().tab.(seekReader)
	if !ok || !sr.readsBySeek() || workers < 1 {
		return recs
	}
	return func(yield func(int64) bool) {
		ctx, cancel := context.WithCancel(ctx)
		k := workers * aheadPerWorker
		a := &ahead{t: t, slots: make(chan struct{}, k), jobs: make(chan int64), order: make(chan int64, k), quit: make(chan struct{})}
		a.wg.Add(workers + 1)
		for range workers {
			go a.work(ctx)
		}
		go a.feed(ctx, recs)
		defer func() {
			close(a.quit)
			cancel()
			for range a.order { // let the feeder finish
			}
			a.wg.Wait()
		}()
		for n := range a.order {
			if !yield(n) {
				return
			}
			<-a.slots // the caller is past n: one more may be read ahead
		}
	}
}

// seekReader is a driver table whose every record read may start with a
// seek of its own (a compressed stream resumed from a checkpoint), so that
// reading several records at once pays: ReadAhead reads ahead only for
// tables that say so.
type seekReader interface {
	readsBySeek() bool
}

// ahead is one ReadAhead in progress.
type ahead struct {
	t     *Table
	slots chan struct{} // a token per record handed out and not yet passed by the caller
	jobs  chan int64    // records for the workers
	order chan int64    // every record, for the caller, in order
	quit  chan struct{} // closed when the caller stops
	wg    sync.WaitGroup
}

// feed hands the records of recs to the caller and, until ctx ends, to
// the workers, taking a slot for each, until recs ends or the caller
// stops.
func (a *ahead) feed(ctx context.Context, recs iter.Seq[int64]) {
	defer a.wg.Done()
	defer close(a.order)
	defer close(a.jobs)
	for n := range recs {
		select {
		case a.slots <- struct{}{}:
		case <-a.quit:
			return
		}
		a.order <- n // never blocks: it holds as many records as there are slots
		if ctx.Err() != nil || n < 0 || n >= a.t.Len() || a.t.Size(n) > aheadMaxRecord {
			continue // the caller's read reports it, or streams it
		}
		select {
		case a.jobs <- n:
		case <-ctx.Done():
		case <-a.quit:
			return
		}
	}
}

// work reads the records it is handed into a buffer of its own, which
// leaves their decompressed units in the cache.
func (a *ahead) work(ctx context.Context) {
	defer a.wg.Done()
	var buf []byte
	for n := range a.jobs {
		if ctx.Err() != nil {
			continue
		}
		size := a.t.Size(n)
		if int64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		_, _ = a.t.ReadAt(n, buf[:size], 0) // an error is the caller's read's to report
	}
}
