package index

import (
	"fmt"

	"github.com/recfs/recfs/source"
)

// Sync makes the table's file durable: everything appended to it so far,
// by this table or anyone else, reaches stable storage (one fsync of the
// descriptor the table reads) before Sync returns. Append with
// AppendOptions.Sync does the same for its own records.
func (t *Table) Sync() error {
	w, ok := t.s().src.(source.Writer)
	if !ok {
		return ErrWritableSource
	}
	if err := w.Sync(); err != nil {
		return err
	}
	synced(t.path)
	return t.syncNewEntry()
}

// syncNewEntry fsyncs, once, the directory holding the entry of a file
// Create made without syncing it (Options.DeferCreateSync), after the
// file itself was synced: a file's fsync need not make its name durable.
func (t *Table) syncNewEntry() error {
	dir := t.newEntry.Load()
	if dir == nil {
		return nil
	}
	if err := syncDir(*dir); err != nil {
		return err
	}
	t.newEntry.CompareAndSwap(dir, nil)
	return nil
}

// syncDir fsyncs the directory dir, so that the entries made in it reach
// stable storage.
func syncDir(dir string) error {
	if err := (osFS{}).SyncDir(dir); err != nil {
		return fmt.Errorf("index: sync directory %s: %w", dir, err)
	}
	synced(dir)
	return nil
}

// syncFile fsyncs f, the source file at path, for an append.
func syncFile(f source.Writer, path string) error {
	if err := f.Sync(); err != nil {
		return err
	}
	synced(path)
	return nil
}

// syncs, when set (tests only), is called with the file's path after each
// fsync of a source file that an append, Sync or Create asked for, and
// with the directory's path after each fsync of the directory of a file
// Create made.
var syncs func(path string)

// synced tells syncs that the source file at path was synced.
func synced(path string) {
	if syncs != nil {
		syncs(path)
	}
}

// writeBehind is how many bytes a synced append writes between two asks
// of its background fsync (see syncBehind).
const writeBehind = 1 << 20

// syncBehind fsyncs a file in the background while an append goes on
// writing it, whenever kick asks and the previous fsync is done (asks that
// come during one are merged into the next), so that the append's own
// fsync at the end has only the last bytes left to write: the storage
// works while the writer frames records. It makes no promise itself: the
// append's final fsync does; an error it meets fails the append.
type syncBehind struct {
	kicks   chan struct{}
	done    chan error
	err     error
	stopped bool
}

// startSyncBehind starts the background fsyncs of f.
func startSyncBehind(f source.Writer) *syncBehind {
	s := &syncBehind{kicks: make(chan struct{}, 1), done: make(chan error, 1)}
	go func() {
		var first error
		for range s.kicks {
			if err := f.Sync(); err != nil && first == nil {
				first = err
			}
		}
		s.done <- first
	}()
	return s
}

// kick asks for an fsync, without waiting for it.
func (s *syncBehind) kick() {
	select {
	case s.kicks <- struct{}{}:
	default: // one is asked for already
	}
}

// stop waits for the fsync under way, if any, and the one asked for, and
// returns the first error the fsyncs met. Later calls return it again.
func (s *syncBehind) stop() error {
	if !s.stopped {
		s.stopped = true
		close(s.kicks)
		s.err = <-s.done
	}
	return s.err
}
