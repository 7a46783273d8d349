//go:build linux

package bazil

import (
	"time"

	bazilfs "bazil.org/fuse/fs"

	"github.com/recfs/recfs/fs"
)

// startFollow makes tree follow its record files and, after every change,
// invalidates what the kernel cached about the record directory: the
// entries of the new names, its listing and attributes, .recfs and
// .recfs-summary. Nodes
// are comparable values, so the directory's node is rebuilt from the
// change; the server answers fuse.ErrNotCached (ignored) for nodes the
// kernel does not hold.
func startFollow(srv *bazilfs.Server, fsys *fileSystem, tree *fs.Tree, interval time.Duration) (stop func()) {
	return tree.Follow(interval, func(c fs.Change) {
		dir := node{m: fsys.root.m, n: c.Dir}
		if c.Rewritten {
			dropRecords(srv, fsys, c)
		}
		for _, name := range c.Names() {
			_ = srv.InvalidateEntry(dir, name)
		}
		_ = srv.InvalidateNodeData(dir)
		_ = srv.InvalidateNodeAttr(dir)
		time.AfterFunc(fs.RelistDelay, func() { _ = srv.InvalidateNodeData(dir) })
		for _, n := range []fs.Node{c.Info, c.Summary} {
			f := node{m: fsys.root.m, n: n}
			_ = srv.InvalidateNodeData(f)
			_ = srv.InvalidateNodeAttr(f)
		}
	})
}

// maxDropRecords bounds the records whose kernel state is dropped one by
// one after a rewrite; beyond it the old records' pages may stay cached
// (their reads through open files fail, as the generation moved).
const maxDropRecords = 1 << 20

// dropRecords tells the kernel to forget the contents and attributes of
// every record of the directory before the change c (a rewrite), and the
// entries of those it held, as well as the trailer. The server answers
// fuse.ErrNotCached without a kernel round trip for nodes the kernel does
// not hold.
func dropRecords(srv *bazilfs.Server, fsys *fileSystem, c fs.Change) {
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
