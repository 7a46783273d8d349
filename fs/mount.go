package fs

import (
	"time"

	"github.com/sirupsen/logrus"
)

// MountOptions are the settings every adapter honours.
type MountOptions struct {
	FSName     string // first column of mount and df: the source path
	Name       string // file system subtype; mounts show as "fuse.<Name>" ("recfs" if empty)
	AllowOther bool   // let other users in (also turns on default_permissions)
	Xattrs     bool   // serve user.recfs.* extended attributes
	Debug      bool   // the FUSE library's request log, through Logger at debug level
	Logger     logrus.FieldLogger

	// EntryTimeout and AttrTimeout are how long the kernel may trust names
	// and attributes (0: one hour, right for logs that do not change).
	// NegativeTimeout caches failed lookups (0: one second).
	EntryTimeout, AttrTimeout, NegativeTimeout time.Duration

	// PushAhead is how many records a read-only, non-following mount
	// stores in the kernel's page cache ahead of a reader that goes
	// through a record directory in order (one READ round trip per record
	// saved on a first pass): 0: DefaultPushAhead; negative: none.
	PushAhead int

	// Follow makes the mount show records appended to its sources by any
	// process: the tree refreshes every FollowInterval (0: the index's
	// default) and the adapter invalidates the kernel's caches. ReadWrite
	// mounts the tree writable (appends through created files, mkdir of
	// record files); it must match the tree's Options.ReadWrite.
	Follow, ReadWrite bool
	FollowInterval    time.Duration
}

// Server is a live mount.
type Server interface {
	// Wait blocks until the file system is unmounted.
	Wait() error
	// Unmount asks the kernel to unmount the file system.
	Unmount() error
}

// Mounter serves tree at the directory dir and returns once the mount
// answers. fs/gofuse.Mount is one; a bazil adapter will be another.
type Mounter func(dir string, tree *Tree, o MountOptions) (Server, error)
