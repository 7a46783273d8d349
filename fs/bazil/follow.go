//go:build linux

package bazil

import (
	"time"

	bazilfs "bazil.org/fuse/fs"

	"github.com/recfs/recfs/fs"
)

// maxNotifyNames bounds the new names whose kernel entries are invalidated
// one by one after a change.
const maxNotifyNames = 1024

// startFollow makes tree follow its record files and, after every change,
// invalidates what the kernel cached about the record directory: the
// entries of the new names, its listing and attributes, and .recfs. Nodes
// are comparable values, so the directory's node is rebuilt from the
// change; the server answers fuse.ErrNotCached (ignored) for nodes the
// kernel does not hold.
func startFollow(srv *bazilfs.Server, fsys *FS, tree *fs.Tree, interval time.Duration) (stop func()) {
	return tree.Follow(interval, func(c fs.Change) {
		dir := node{m: fsys.root.m, n: c.Dir}
		if c.Rewritten {
			dropRecords(srv, fsys, c)
		}
		for _, name := range c.Names(maxNotifyNames) {
			_ = srv.InvalidateEntry(dir, name)
		}
		_ = srv.InvalidateNodeData(dir)
		_ = srv.InvalidateNodeAttr(dir)
		// A listing opened just before the change and read just after
		// it fills the kernel's fresh listing cache with the old entries:
		// drop the listing once more when such a listing is over.
		time.AfterFunc(relistDelay, func() { _ = srv.InvalidateNodeData(dir) })
		info := node{m: fsys.root.m, n: c.Info}
		_ = srv.InvalidateNodeData(info)
		_ = srv.InvalidateNodeAttr(info)
	})
}

// relistDelay is how long after a change the directory listing is dropped
// a second time.
const relistDelay = 200 * time.Millisecond

// maxDropRecords bounds the records whose kernel state is dropped one by
// one after a rewrite; beyond it the old records' pages may stay cached
// (their reads through open files fail, as the generation moved).
const maxDropRecords = 1 << 20

// dropRecords tells the kernel to forget the contents and attributes of
// every record of the directory before the change c (a rewrite), and the
// entries of those it held, as well as the trailer. The server answers
// fuse.ErrNotCached without a kernel round trip for nodes the kernel does
// not hold.
func dropRecords(srv *bazilfs.Server, fsys *FS, c fs.Change) {
	dir := node{m: fsys.root.m, n: c.Dir}
	for n := range min(c.OldLen, maxDropRecords) {
		rec := node{m: fsys.root.m, n: c.Record(n)}
		if srv.InvalidateNodeData(rec) != nil {
			continue // not held by the kernel
		}
		_ = srv.InvalidateNodeAttr(rec)
		_ = srv.InvalidateEntry(dir, fs.RecordName(n, c.OldLen))
	}
	_ = srv.InvalidateEntry(dir, fs.TrailerName)
}
