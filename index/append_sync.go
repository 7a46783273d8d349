package index

import "github.com/recfs/recfs/source"

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
// fsync of a source file that an append, Sync or Create asked for.
var syncs func(path string)

// synced tells syncs that the source file at path was synced.
func synced(path string) {
	if syncs != nil {
		syncs(path)
	}
}
