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
	l := t.localFile()
	if l == nil {
		return ErrWritableSource
	}
	if err := l.Sync(); err != nil {
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
