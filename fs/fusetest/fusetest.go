// Package fusetest is the node-level test suite every FUSE adapter of recfs
// runs (rclone's vfstest idea): the same lookups, attributes, listings,
// reads, refusals, extended attributes, cache hints and appends, asked
// through each adapter's own nodes without a kernel, with the answers the
// kernel would see. An adapter's test file implements [Driver] over its
// library's node API and calls [Run].
//
// It also holds the helpers such tests share: an in-memory source
// ([MemSource]), a fake record format for directory trees, and a quiet
// logger.
package fusetest

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/fs"
)

// Node is an adapter's kernel-facing node. It must be comparable: two
// lookups of one entry ("42" and "000042") give equal nodes.
type Node any

// Attr is what the kernel learns of a node's attributes.
type Attr struct {
	Ino   uint64
	Mode  uint32 // file type and permission bits, as in syscall.Stat_t
	Size  uint64
	Nlink uint32
	TTL   time.Duration // how long the kernel may trust them (0 or a nanosecond: not at all)
}

// Entry is the answer to a lookup, create or mkdir.
type Entry struct {
	Node     Node
	Attr     Attr
	EntryTTL time.Duration // how long the kernel may trust the name; for a failed lookup, the negative entry's (0: none)
}

// File is an open file of an adapter.
type File interface {
	// Read reads up to size bytes at off, as one read request.
	Read(off int64, size int) ([]byte, error)
	// Write writes p at off, as one write request.
	Write(p []byte, off int64) (int, error)
	// Flush is close(2)'s FLUSH.
	Flush() error
	// Release is the last close's RELEASE.
	Release() error
}

// DirEntry is one entry of a listing.
type DirEntry struct {
	Name string
	Ino  uint64
	Dir  bool
}

// Op names a change the suite asks an adapter for (Driver.Change).
type Op string

// The changes of Driver.Change.
const (
	OpMkdir       Op = "mkdir"       // Change(OpMkdir, parent, name, nil)
	OpMknod       Op = "mknod"       // Change(OpMknod, parent, name, nil)
	OpUnlink      Op = "unlink"      // Change(OpUnlink, parent, name, nil)
	OpRmdir       Op = "rmdir"       // Change(OpRmdir, parent, name, nil)
	OpRename      Op = "rename"      // Change(OpRename, parent, name, nil): to name+".new" in parent
	OpSymlink     Op = "symlink"     // Change(OpSymlink, parent, name, nil): a link to "x"
	OpLink        Op = "link"        // Change(OpLink, parent, name, target)
	OpSetxattr    Op = "setxattr"    // Change(OpSetxattr, nil, "user.x", target)
	OpRemovexattr Op = "removexattr" // Change(OpRemovexattr, nil, "user.x", target)
	OpTruncate    Op = "truncate"    // Change(OpTruncate, nil, "", target): setattr of size 0
)

// Driver drives one adapter's nodes for a tree, as the kernel would.
// Errors are the errnos (syscall.Errno) a caller of the system call would
// see: an adapter that answers ENOSYS to turn an operation off reports the
// ENOTSUP the kernel turns it into, a cached negative entry is ENOENT.
type Driver interface {
	// Root returns the root node.
	Root() Node
	// Lookup looks name up in parent.
	Lookup(parent Node, name string) (Entry, error)
	// Getattr returns n's attributes.
	Getattr(n Node) (Attr, error)
	// Open opens n with open(2) flags. The hints are the cache flags the
	// kernel got (for a mount that opens without asking, those the kernel
	// then assumes: keep the cache, no flush).
	Open(n Node, flags int) (File, fs.OpenHints, error)
	// Create creates name in parent, opened with flags.
	Create(parent Node, name string, flags int) (Entry, File, fs.OpenHints, error)
	// ReadDir lists the directory n whole, "." and ".." included.
	ReadDir(n Node) ([]DirEntry, fs.OpenHints, error)
	// Getxattr returns the extended attribute name of n.
	Getxattr(n Node, name string) ([]byte, error)
	// Listxattr returns the names of n's extended attributes.
	Listxattr(n Node) ([]string, error)
	// Setmode changes n's mode (chmod), returning its attributes.
	Setmode(n Node, mode uint32) (Attr, error)
	// Change asks for a change the suite expects to be refused (or, for
	// pending files, allowed).
	Change(op Op, parent Node, name string, target Node) error
	// Statfs returns what statfs(2) reports.
	Statfs() (fs.StatfsInfo, error)
}

// Caps are what an adapter's library can do that the suite checks only
// where it can.
type Caps struct {
	// NoOpen: read-only mounts that do not follow their sources open
	// files without a request (FUSE's no-open mode).
	NoOpen bool
	// NegativeEntries: failed lookups are cached for the mount's
	// NegativeTimeout.
	NegativeEntries bool
}

// NewDriver returns the driver of an adapter serving tree with o.
type NewDriver func(t testing.TB, tree *fs.Tree, o fs.MountOptions) Driver

// Run runs the node suite against the adapter newDriver makes.
func Run(t *testing.T, caps Caps, newDriver NewDriver) {
	s := &suite{caps: caps, newDriver: newDriver}
	for _, tc := range []struct {
		name string
		f    func(t *testing.T)
	}{
		{"LookupAttr", s.testLookupAttr},
		{"OneNodePerRecord", s.testOneNodePerRecord},
		{"LookupInFile", s.testLookupInFile},
		{"NegativeEntries", s.testNegativeEntries},
		{"Timeouts", s.testTimeouts},
		{"ReadDir", s.testReadDir},
		{"ReadDirAgain", s.testReadDirAgain},
		{"Read", s.testRead},
		{"ReadPastEnd", s.testReadPastEnd},
		{"InfoFile", s.testInfoFile},
		{"Trailer", s.testTrailer},
		{"ReadErrorReported", s.testReadErrorReported},
		{"ReadOnly", s.testReadOnly},
		{"XattrsOff", s.testXattrsOff},
		{"Xattrs", s.testXattrs},
		{"DirTree", s.testDirTree},
		{"Statfs", s.testStatfs},
		{"FollowDirectIO", s.testFollowDirectIO},
		{"Write", s.testWrite},
		{"WriteRefusals", s.testWriteRefusals},
	} {
		t.Run(tc.name, tc.f)
	}
}

type suite struct {
	caps      Caps
	newDriver NewDriver
}

// uncached reports whether a timeout means "ask again" (go-fuse cannot say
// 0 and says a nanosecond).
func uncached(d time.Duration) bool { return d <= time.Millisecond }

// errno returns err's errno (0 for nil, EIO for anything else).
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}
