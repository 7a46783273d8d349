package fs

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// Mount policy: what a mount tells the kernel about caching, names and
// attributes is decided here, once, for every adapter. An adapter asks its
// [Policy] per mount ([Policy.Mount]) and per node ([Policy.Entry],
// [Policy.AttrTTL], [Policy.File], [Policy.Dir], [Policy.Xattr],
// [Policy.Statfs]) and maps the answers to its library's flags; it decides
// nothing of its own beyond what its library cannot express.

// Defaults of the mount policy, for logs that do not change.
const (
	DefaultName            = "recfs"          // file system subtype: mounts show as "fuse.recfs"
	DefaultEntryTimeout    = time.Hour        // how long the kernel trusts a name
	DefaultAttrTimeout     = time.Hour        // how long the kernel trusts attributes
	DefaultNegativeTimeout = time.Second      // how long the kernel trusts a failed lookup
	DefaultPushAhead       = 16384            // records pushed into the page cache ahead of an in-order reader
	PlainAttrTimeout       = time.Second      // attributes of passed-through files, which other processes may change
	xattrPrefix            = "user.recfs."    // the namespace of the attributes the tree serves
	statfsBlock            = 4096             // block size statfs reports
	statfsNameLen          = 255              // longest name statfs reports
	noTimeout              = time.Duration(0) // "do not cache": adapters map it to their library's smallest timeout
)

// ErrNoXattr is returned by [Policy.Xattr] for a name the node does not
// have (ENODATA).
var ErrNoXattr = errors.New("fs: no such extended attribute")

// ErrXattrsOff is returned by [Policy.Xattr] and [Policy.XattrNames] when
// the mount serves no extended attributes (MountOptions.Xattrs unset).
// Adapters answer it so that the kernel stops asking: ENOSYS where their
// library passes it on, ENOTSUP otherwise.
var ErrXattrsOff = errors.New("fs: extended attributes are off")

// MountPolicy is what a mount tells the kernel once, at mount time:
// MountOptions with every default filled in.
type MountPolicy struct {
	FSName  string // first column of mount and df (the tree's source by default)
	Subtype string // mounts show as "fuse.<Subtype>"
	// ReadOnly mounts read-only at the VFS level (every mount that does
	// not take appends).
	ReadOnly bool
	// AllowOther lets other users in; DefaultPermissions, set with it,
	// makes the kernel check permissions against the attributes.
	AllowOther, DefaultPermissions bool
	// Xattrs: the mount serves user.recfs.* extended attributes.
	Xattrs bool
	// EntryTimeout and AttrTimeout are the defaults of names and
	// attributes (per-node answers may be shorter). NegativeTimeout is how
	// long a failed lookup is cached; 0 means not at all.
	EntryTimeout, AttrTimeout, NegativeTimeout time.Duration
	// NoOpen: nothing on the mount needs an open handle of a regular file
	// (read-only mounts that do not follow their sources), so an adapter
	// may put the kernel in its no-open mode, where files are opened
	// without a request, keep their cached pages across opens and send
	// neither FLUSH nor RELEASE. Writable mounts need handles (created
	// files append on FLUSH, .recfs changes) and so do following ones
	// (records of a rewritten source must bypass the page cache, which
	// only an open can ask for). Writable mounts also need the OPEN
	// itself: in no-open mode the kernel lets every open succeed, so an
	// existing record opened O_RDWR and mapped MAP_SHARED could change
	// the cached pages every reader is served from while the source
	// stays as it was (e2e TestRWRecordOpenForWriting). What OPEN costs
	// is its round trip and its RELEASE, not the work behind them.
	NoOpen bool
	// PushAhead: records an adapter may store in the kernel's page cache
	// ahead of a reader going through a record directory in order
	// (FUSE_NOTIFY_STORE); 0: none. Only no-open mounts push: their pages
	// survive opens, and their records never change.
	PushAhead int
	// Follow: the tree follows its sources and the adapter invalidates
	// the kernel's caches after every change.
	Follow         bool
	FollowInterval time.Duration
	Debug          bool               // the library's request log, at debug level
	Logger         logrus.FieldLogger // never nil
}

// NoOpen reports whether a mount with options o may run in the kernel's
// no-open mode (see MountPolicy.NoOpen).
func NoOpen(o MountOptions) bool { return !o.ReadWrite && !o.Follow }

// OpensForWrite reports whether the flags of an open(2) the kernel
// forwards ask to change the file: an access mode other than O_RDONLY, or
// O_TRUNC, O_APPEND or O_CREAT. Only pending files of a writable tree
// open that way; every other file refuses it.
func OpensForWrite(flags uint32) bool {
	return flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND|syscall.O_CREAT) != 0
}

// EntryHints are the kernel cache timeouts of a looked-up or created
// entry. A zero duration means "do not cache".
type EntryHints struct {
	Entry time.Duration // the name
	Attr  time.Duration // the attributes
}

// OpenHints are the kernel flags of an open file or directory.
type OpenHints struct {
	KeepCache bool // keep the pages (or listing) cached before this open
	DirectIO  bool // bypass the page cache: every read reaches the tree
	NoFlush   bool // send no FLUSH on close
	CacheDir  bool // directories: the kernel may cache the listing
}

// StatfsInfo is what statfs(2) reports: a read-only file system with no
// free space.
type StatfsInfo struct {
	Bsize, Frsize uint32
	NameLen       uint32
}

// Policy answers an adapter's questions about one mount of a tree. It is
// safe for concurrent use.
type Policy struct {
	t *Tree
	m MountPolicy
}

// NewPolicy returns the policy of mounting t with o.
func NewPolicy(t *Tree, o MountOptions) *Policy {
	m := MountPolicy{
		FSName:             o.FSName,
		Subtype:            o.Name,
		ReadOnly:           !o.ReadWrite,
		AllowOther:         o.AllowOther,
		DefaultPermissions: o.AllowOther,
		Xattrs:             o.Xattrs,
		EntryTimeout:       o.EntryTimeout,
		AttrTimeout:        o.AttrTimeout,
		NegativeTimeout:    o.NegativeTimeout,
		NoOpen:             NoOpen(o),
		Follow:             o.Follow,
		FollowInterval:     o.FollowInterval,
		Debug:              o.Debug,
		Logger:             o.Logger,
	}
	if m.FSName == "" {
		m.FSName = t.Origin()
	}
	if m.Subtype == "" {
		m.Subtype = DefaultName
	}
	if m.EntryTimeout == 0 {
		m.EntryTimeout = DefaultEntryTimeout
	}
	if m.AttrTimeout == 0 {
		m.AttrTimeout = DefaultAttrTimeout
	}
	if m.NegativeTimeout == 0 && !o.ReadWrite {
		// Appends make new record names: in a writable mount a failed
		// lookup must not hide the record the next close(2) creates.
		m.NegativeTimeout = DefaultNegativeTimeout
	}
	switch {
	case !m.NoOpen || o.PushAhead < 0:
		m.PushAhead = 0
	case o.PushAhead == 0:
		m.PushAhead = DefaultPushAhead
	default:
		m.PushAhead = o.PushAhead
	}
	if m.Logger == nil {
		m.Logger = logrus.StandardLogger()
	}
	return &Policy{t: t, m: m}
}

// Tree returns the tree the policy is about.
func (p *Policy) Tree() *Tree { return p.t }

// Mount returns the mount-wide settings.
func (p *Policy) Mount() MountPolicy { return p.m }

// AttrTTL returns how long the kernel may trust the attributes of n: not
// at all for nodes that change while mounted ([Tree.Mutable]) and records
// whose size is a saved index's claim not proven yet ([Prover]), a second for
// passed-through files (a new size or mtime then drops the pages the
// kernel kept), the mount's attribute timeout otherwise.
func (p *Policy) AttrTTL(n Node) time.Duration {
	switch {
	case p.t.Mutable(n), n.Kind == KindRecord && !p.t.proven(n):
		return noTimeout
	case n.Kind == KindFile:
		return PlainAttrTimeout
	}
	return p.m.AttrTimeout
}

// Entry returns the cache timeouts of the entry n handed to the kernel by
// a lookup, create or mkdir. A pending file's name is not cached: it
// disappears when the file is released.
func (p *Policy) Entry(n Node) EntryHints {
	h := EntryHints{Entry: p.m.EntryTimeout, Attr: p.AttrTTL(n)}
	if n.Kind == KindPending {
		h.Entry = noTimeout
	}
	return h
}

// File returns the flags of an open of the file n, for writing (a pending
// file) or for reading.
func (p *Policy) File(n Node, write bool) OpenHints {
	if write {
		// Every write and read of a pending file reaches the tree.
		return OpenHints{DirectIO: true}
	}
	h := OpenHints{NoFlush: true}
	switch {
	case p.t.Mutable(n):
		// .recfs of a writable mount changes size with every append:
		// reads bypass the page cache, so one open reads one version.
		h.DirectIO = true
	case p.m.Follow && n.Kind != KindFile:
		// A followed source may be rewritten: pages or a size the kernel
		// kept from the old version would mix with the new one. Reads go
		// to the open file, which reads one version or fails.
		h.DirectIO = true
	case n.Kind != KindFile:
		// Records never change: the kernel keeps their pages across
		// opens.
		h.KeepCache = true
	}
	return h
}

// Dir returns the flags of an open of the directory n: listings of record
// directories (and trailer/) never change unless the mount is writable, so
// the kernel may cache them.
func (p *Policy) Dir(n Node) OpenHints {
	if (n.Kind == KindRecordDir || n.Kind == KindTrailerDir) && !p.t.Mutable(n) {
		return OpenHints{CacheDir: true, KeepCache: true}
	}
	return OpenHints{}
}

// Statfs returns what statfs(2) reports for the mount.
func (p *Policy) Statfs() StatfsInfo {
	return StatfsInfo{Bsize: statfsBlock, Frsize: statfsBlock, NameLen: statfsNameLen}
}

// Xattr returns the value of the extended attribute name of n:
// ErrXattrsOff when the mount serves none, ErrNoXattr when n has no such
// attribute (names outside user.recfs.* are answered without asking the
// tree).
func (p *Policy) Xattr(ctx context.Context, n Node, name string) ([]byte, error) {
	if !p.m.Xattrs {
		return nil, ErrXattrsOff
	}
	if !strings.HasPrefix(name, xattrPrefix) {
		return nil, ErrNoXattr
	}
	xs, err := p.t.Xattrs(ctx, n)
	if err != nil {
		return nil, err
	}
	for _, x := range xs {
		if x.Name == name {
			return x.Value, nil
		}
	}
	return nil, ErrNoXattr
}

// XattrNames returns the names of n's extended attributes, or
// ErrXattrsOff when the mount serves none.
func (p *Policy) XattrNames(ctx context.Context, n Node) ([]string, error) {
	if !p.m.Xattrs {
		return nil, ErrXattrsOff
	}
	xs, err := p.t.Xattrs(ctx, n)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.Name
	}
	return names, nil
}
