package gofuse

import (
	"strconv"
	"strings"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/recfs/recfs/fs"
)

// maxNotifyNames bounds the new names whose (negative) kernel entries are
// invalidated one by one after a change; beyond it, the 1 s negative timeout
// lets the kernel find the rest on its own.
const maxNotifyNames = 1024

// startFollow makes tree follow its record files and, after every change,
// invalidates what the kernel cached about the record directory: the
// entries of the new names, its listing and attributes, and .recfs. root is
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
	for _, name := range c.Names(maxNotifyNames) {
		dir.NotifyEntry(name)
	}
	dir.NotifyContent(0, 0)
	// A listing opened just before the change and read just after it
	// fills the kernel's fresh listing cache with the old entries: drop
	// the listing once more when such a listing is over.
	time.AfterFunc(relistDelay, func() { dir.NotifyContent(0, 0) })
	if info := dir.GetChild(fs.InfoName); info != nil {
		info.NotifyContent(0, 0)
	}
}

// relistDelay is how long after a change the directory listing is dropped
// a second time.
const relistDelay = 200 * time.Millisecond

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
