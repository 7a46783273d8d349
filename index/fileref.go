package index

import (
	"os"
	"sync/atomic"

	"github.com/recfs/recfs/source/local"
)

// fileRef is a source file's descriptor shared by the snapshots that read
// it (each through the local.File of its own version). It counts the
// table's own hold on the file plus the reads that use its raw descriptor
// (the per-read fstat of checkSource), so that a table can let
// go of a file it no longer reads (replaced at its path, or the table
// closed) while reads of older snapshots are still running: the file is
// closed when the last of them ends, never under one, so no read ever
// stats a descriptor number that was reused for another file. It costs two
// atomic operations a read and no allocation.
type fileRef struct {
	src  *local.File  // the descriptor, as the version it was opened as
	refs atomic.Int64 // the table's hold (1) plus reads in flight; 0 once closed
}

// newFileRef returns the shared reference of src's descriptor, held by its
// table.
func newFileRef(src *local.File) *fileRef {
	r := &fileRef{src: src}
	r.refs.Store(1)
	return r
}

// acquire takes a use of the descriptor; it reports false once the table
// let go of the file and no read holds it any more (the file is closed).
func (r *fileRef) acquire() bool {
	for {
		n := r.refs.Load()
		if n <= 0 {
			return false
		}
		if r.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// hold takes a use of the table's current descriptor for the raw fstat of
// a refresh or an append (t.mu held, so the table does not switch files
// under it); a table closed meanwhile fails with os.ErrClosed, as a stat of
// its closed *os.File would, never with the stat of whatever file reused
// the descriptor's number. done releases the use.
func (t *Table) hold() (done func(), err error) {
	r := t.fref
	if !r.acquire() {
		return nil, &os.PathError{Op: "fstat", Path: t.path, Err: os.ErrClosed}
	}
	return func() { _ = r.release() }, nil
}

// release ends a use taken by acquire, or the table's hold; the last one
// closes the file.
func (r *fileRef) release() error {
	if r.refs.Add(-1) == 0 {
		return r.src.Close()
	}
	return nil
}
