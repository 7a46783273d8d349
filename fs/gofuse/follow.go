package gofuse

import (
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
func startFollow(root *fusefs.Inode, tree *fs.Tree, interval time.Duration) (stop func()) {
	return tree.Follow(interval, func(c fs.Change) { invalidate(root, c) })
}

// invalidate tells the kernel to forget what c made stale. A directory the
// kernel never looked up has nothing cached, so nothing is sent for it.
func invalidate(root *fusefs.Inode, c fs.Change) {
	dir := root
	if name := c.Dir.Name(); name != "" {
		for _, comp := range strings.Split(name, "/") {
			if dir = dir.GetChild(comp); dir == nil {
				return
			}
		}
	}
	for _, name := range c.Names(maxNotifyNames) {
		dir.NotifyEntry(name)
	}
	dir.NotifyContent(0, 0)
	if info := dir.GetChild(fs.InfoName); info != nil {
		info.NotifyContent(0, 0)
	}
}
