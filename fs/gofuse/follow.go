package gofuse

import (
	"strconv"
	"strings"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/recfs/recfs/fs"
)

// startFollow makes tree follow its record files and, after every change,
// invalidates what the kernel cached about the record directory: the
// entries of the new names, its listing and attributes, .recfs and
// .recfs-summary. root is
// the mount's root inode.
func startFollow(root *fusefs.Inode, m *mount, interval time.Duration) (stop func()) {
	return m.t.Follow(interval, func(c fs.Change) { invalidate(root, m.records, c) })
}

// invalidate tells the kernel to forget what c made stale: after a rewrite
// that is everything it holds below the directory. A directory the
// kernel never looked up has nothing cached, so nothing is sent for it.
func invalidate(root *fusefs.Inode, r *recordFS, c fs.Change) {
	dir := root
	if name := c.Dir.Name(); name != "" {
		for _, comp := range strings.Split(name, "/") {
			if dir = dir.GetChild(comp); dir == nil {
				return
			}
		}
	}
	if c.Rewritten {
		dropAll(dir)
		if r != nil {
			r.dropRecords(dir, c)
		}
	}
	for _, name := range c.Names() {
		dir.NotifyEntry(name)
	}
	dir.NotifyContent(0, 0)
	time.AfterFunc(fs.RelistDelay, func() { dir.NotifyContent(0, 0) })
	for _, name := range []string{fs.InfoName, fs.SummaryName} {
		if f := dir.GetChild(name); f != nil {
			f.NotifyContent(0, 0)
		}
	}
}

// dropAll tells the kernel to forget the contents, attributes and entries
// of every node it holds below dir (record files, trailer/ and its item):
// the pages of a record cached before a rewrite must not be served after
// it, nor its old size. Nodes the kernel never looked up are not held, so
// this costs one notification per node the kernel knows.
func dropAll(dir *fusefs.Inode) {
	for name, child := range dir.Children() {
		if child.IsDir() {
			dropAll(child)
		}
		child.NotifyContent(0, 0)
		dir.NotifyEntry(name)
	}
}

// dropRecords tells the kernel to forget the contents, attributes and
// entries of the records of c's directory it was given before a rewrite
// (records have no bridge nodes for dropAll to find). A record the kernel
// no longer holds costs one refused notification.
func (r *recordFS) dropRecords(dir *fusefs.Inode, c fs.Change) {
	first := c.Dir.FirstRecordIno()
	for _, d := range r.dirs.Load().byFirst {
		if d.first != first {
			continue
		}
		for n := range d.seen.Load() {
			r.m.srv.InodeNotify(first+uint64(n), 0, 0)
			for _, count := range []int64{c.OldLen, c.NewLen} {
				if n < count {
					dir.NotifyEntry(fs.RecordName(n, count))
				}
			}
			dir.NotifyEntry(strconv.FormatInt(n, 10))
		}
	}
}
