package gofuse

import (
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

// recordFS answers the kernel's requests about records itself, in front of
// go-fuse's node bridge, which serves everything else (directories,
// .recfs, trailer/, pending files). A record's node ID is its inode number
// (fs.Node.FirstRecordIno of its directory plus its number), so nothing is
// kept per record: the kernel may hold millions of record inodes, as it
// holds millions of tmpfs inodes, and the server's memory does not grow
// with them. Bridge nodes use their inode numbers as node IDs too
// (fusefs.Options.ExternalNodeID), so a LOOKUP in a record directory is
// recognised by its parent's node ID, registered when the bridge made that
// directory's node.
//
// Every request that can name a record is answered here (records.go),
// records_dir.go lists record directories, and records_refuse.go refuses
// changes: a record's node ID must never reach the bridge, which panics
// on IDs it did not make (records_test.go pins the method set).
type recordFS struct {
	fuse.RawFileSystem // go-fuse's node bridge
	m                  *mount

	dirs atomic.Pointer[recordDirs] // copy on write, under mu

	// Listings hand out record entries (inodes) only while the kernel
	// uses what it was given: once leanAfter entries went out since the
	// last request about any record, the next go out as names alone
	// (see readDir).
	leanAfter int64
	listed    atomic.Int64 // record entries listings handed out
	usedAt    atomic.Int64 // listed at the latest request about a record

	mu       sync.Mutex
	files    map[uint64]*fileHandle    // open records (mounts that keep OPEN)
	listings map[uint64]*recordListing // open record directories
	nextFh   uint64
}

// recordDirs is the set of record directories the kernel was given, by
// node ID and by their first record's inode number.
type recordDirs struct {
	byNode  map[uint64]*recordDir
	byFirst []*recordDir // ascending first
}

// recordDir is a record directory the kernel knows.
type recordDir struct {
	node  fs.Node
	first uint64       // inode number (node ID) of record 0
	seen  atomic.Int64 // records numbered below this were handed out: node IDs past it are not ours

	refMu sync.Mutex
	refs  uint64 // kernel lookups of its records not yet forgotten: while > 0 the tree holds the file
}

func newRecordFS(bridge fuse.RawFileSystem, m *mount) *recordFS {
	r := &recordFS{RawFileSystem: bridge, m: m, files: make(map[uint64]*fileHandle), listings: make(map[uint64]*recordListing), leanAfter: leanAfter}
	r.dirs.Store(&recordDirs{byNode: map[uint64]*recordDir{}})
	return r
}

// addDir registers the record directory n under the kernel's node ID id.
// The bridge calls it (through mount.records) when it makes the node, before
// the kernel learns the ID.
func (r *recordFS) addDir(id uint64, n fs.Node) {
	first := n.FirstRecordIno()
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.dirs.Load()
	if d := old.byNode[id]; d != nil && d.first == first {
		return
	}
	next := &recordDirs{byNode: make(map[uint64]*recordDir, len(old.byNode)+1), byFirst: slices.Clone(old.byFirst)}
	for k, v := range old.byNode {
		next.byNode[k] = v
	}
	i, found := slices.BinarySearchFunc(next.byFirst, first, func(d *recordDir, f uint64) int { return cmpU64(d.first, f) })
	var d *recordDir
	if found {
		d = next.byFirst[i] // the same file under another node ID
	} else {
		d = &recordDir{node: n, first: first}
		next.byFirst = slices.Insert(next.byFirst, i, d)
	}
	next.byNode[id] = d
	r.dirs.Store(next)
}

// leanAfter is how many record entries listings hand out without the
// kernel asking about any record before they go out as names alone. Each
// entry makes a kernel inode (about 1 KiB and a microsecond or two), which
// ls, ls -f and find -name never use (make bench's open-warm row measures
// a mount + ls of 1M records). Readers that use what they list (ls -l
// stats each page it reads; grep -r opens what fts read, up to 100,000
// names at a time) keep getting entries: a use re-arms the count, so ls -l meets a page of names alone (and looks
// those up) at most once per leanAfter entries.
const leanAfter = 1 << 17

// used notes a request about a record.
func (r *recordFS) used() {
	if l := r.listed.Load(); r.usedAt.Load() != l {
		r.usedAt.Store(l)
	}
}

// lean reports whether a listing's next record goes out as a name alone.
func (r *recordFS) lean() bool { return r.listed.Load()-r.usedAt.Load() >= r.leanAfter }

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dir returns the record directory with node ID id, if it is one.
func (r *recordFS) dir(id uint64) *recordDir { return r.dirs.Load().byNode[id] }

// record returns the record with node ID id, if it is one handed out.
func (r *recordFS) record(id uint64) (*recordDir, fs.Node, bool) {
	ds := r.dirs.Load().byFirst
	i, found := slices.BinarySearchFunc(ds, id, func(d *recordDir, f uint64) int { return cmpU64(d.first, f) })
	if !found {
		if i == 0 {
			return nil, fs.Node{}, false
		}
		i--
	}
	d := ds[i]
	n := id - d.first
	if n >= uint64(d.seen.Load()) {
		return nil, fs.Node{}, false
	}
	return d, d.node.Record(int64(n)), true
}

// hold notes k kernel references to records of d.
func (d *recordDir) hold(t *fs.Tree, c fs.Node, k uint64) {
	d.refMu.Lock()
	if d.refs == 0 {
		t.Hold(c)
	}
	d.refs += k
	d.refMu.Unlock()
}

// release drops k of them.
func (d *recordDir) release(t *fs.Tree, c fs.Node, k uint64) {
	d.refMu.Lock()
	last := d.refs > 0 && d.refs <= k
	d.refs -= min(k, d.refs)
	d.refMu.Unlock()
	if last {
		t.Forget(c)
	}
}

// see notes that records below n were handed out.
func (d *recordDir) see(n int64) {
	for {
		s := d.seen.Load()
		if s >= n || d.seen.CompareAndSwap(s, n) {
			return
		}
	}
}

// entry fills out with record c of d as a new kernel reference.
func (r *recordFS) entry(ctx context.Context, d *recordDir, c fs.Node, out *fuse.EntryOut) fuse.Status {
	t := r.m.t
	a, err := t.Getattr(ctx, c)
	if err != nil {
		return fuse.Status(t.Report(err))
	}
	if a.Ino != d.first+uint64(c.N) {
		// makeIno steps over 0 and 1: a record there cannot be mapped back.
		return fuse.EIO
	}
	d.see(c.N + 1)
	d.hold(t, c, 1)
	fillAttr(&out.Attr, a)
	out.NodeId = a.Ino
	out.Generation = 0
	r.m.timeouts(c, out)
	return fuse.OK
}

func ctxOf(h *fuse.InHeader, cancel <-chan struct{}) *fuse.Context {
	return &fuse.Context{Caller: h.Caller, Cancel: cancel}
}

// Lookup answers the lookup of a record in a record directory; other names
// go to the bridge.
func (r *recordFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if d := r.dir(h.NodeId); d != nil && name != "." && name != ".." {
		ctx := ctxOf(h, cancel)
		if c, err := r.m.t.Lookup(ctx, d.node, name); err == nil && c.Kind == fs.KindRecord {
			r.used()
			return r.entry(ctx, d, c, out)
		}
	} else if _, _, ok := r.record(h.NodeId); ok {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Lookup(cancel, h, name, out)
}

func (r *recordFS) Forget(id, nlookup uint64) {
	if d, c, ok := r.record(id); ok {
		d.release(r.m.t, c, nlookup)
		return
	}
	r.RawFileSystem.Forget(id, nlookup)
}

func (r *recordFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if _, c, ok := r.record(in.NodeId); ok {
		r.used()
		return r.m.getattr(ctxOf(&in.InHeader, cancel), c, out)
	}
	return r.RawFileSystem.GetAttr(cancel, in, out)
}

func (r *recordFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	_, c, ok := r.record(in.NodeId)
	if !ok {
		return r.RawFileSystem.Open(cancel, in, out)
	}
	r.used()
	f, flags, errno := r.m.openRead(ctxOf(&in.InHeader, cancel), c, in.Flags)
	if f == nil {
		return fuse.Status(errno)
	}
	r.mu.Lock()
	r.nextFh++
	fh := r.nextFh
	r.files[fh] = f
	r.mu.Unlock()
	out.Fh = fh
	out.OpenFlags = flags
	return fuse.OK
}

func (r *recordFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	d, c, ok := r.record(in.NodeId)
	if !ok {
		return r.RawFileSystem.Read(cancel, in, buf)
	}
	r.used()
	var ra io.ReaderAt
	if in.Fh != 0 {
		r.mu.Lock()
		f := r.files[in.Fh]
		r.mu.Unlock()
		if f == nil {
			return nil, fuse.EBADF
		}
		ra = f.h
	} else if in.Offset == 0 && r.m.push != nil {
		r.m.push.read(d, c.N)
	}
	res, errno := r.m.read(ctxOf(&in.InHeader, cancel), c, ra, buf[:min(len(buf), int(in.Size))], int64(in.Offset))
	return res, fuse.Status(errno)
}

func (r *recordFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	if _, _, ok := r.record(in.NodeId); !ok {
		r.RawFileSystem.Release(cancel, in)
		return
	}
	r.mu.Lock()
	f := r.files[in.Fh]
	delete(r.files, in.Fh)
	r.mu.Unlock()
	if f != nil {
		f.Release(context.Background())
	}
}

func (r *recordFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.Status(r.m.flush())
	}
	return r.RawFileSystem.Flush(cancel, in)
}

func (r *recordFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if _, c, ok := r.record(h.NodeId); ok {
		n, errno := r.m.getxattr(ctxOf(h, cancel), c, attr, dest)
		return n, fuse.Status(errno)
	}
	return r.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (r *recordFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if _, c, ok := r.record(h.NodeId); ok {
		n, errno := r.m.listxattr(ctxOf(h, cancel), c, dest)
		return n, fuse.Status(errno)
	}
	return r.RawFileSystem.ListXAttr(cancel, h, dest)
}

// Access checks the permission bits of a record for the caller (the
// bridge's default for nodes without an Access method).
func (r *recordFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	_, c, ok := r.record(in.NodeId)
	if !ok {
		return r.RawFileSystem.Access(cancel, in)
	}
	a, err := r.m.t.Getattr(ctxOf(&in.InHeader, cancel), c)
	if err != nil {
		return fuse.Status(r.m.t.Report(err))
	}
	if !permits(in.Caller, a, in.Mask) {
		return fuse.EACCES
	}
	return fuse.OK
}

// permits reports whether caller may access a file with attributes a as
// mask (R_OK, W_OK, X_OK bits) asks, by its permission bits.
func permits(caller fuse.Caller, a fs.Attr, mask uint32) bool {
	if caller.Uid == 0 {
		return mask&1 == 0 || a.Mode&0o111 != 0
	}
	perm := a.Mode & 0o7
	switch {
	case caller.Uid == a.UID:
		perm = a.Mode >> 6 & 0o7
	case caller.Gid == a.GID:
		perm = a.Mode >> 3 & 0o7
	}
	return mask&7&^perm == 0
}

// Lseek answers SEEK_DATA and SEEK_HOLE for a record: all data, no holes.
func (r *recordFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	_, c, ok := r.record(in.NodeId)
	if !ok {
		return r.RawFileSystem.Lseek(cancel, in, out)
	}
	a, err := r.m.t.Getattr(ctxOf(&in.InHeader, cancel), c)
	if err != nil {
		return fuse.Status(r.m.t.Report(err))
	}
	if in.Offset >= uint64(a.Size) {
		return fuse.Status(syscall.ENXIO)
	}
	switch in.Whence {
	case unixSeekData:
		out.Offset = in.Offset
	case unixSeekHole:
		out.Offset = uint64(a.Size)
	default:
		return fuse.EINVAL
	}
	return fuse.OK
}

// The lseek(2) whence values FUSE forwards.
const (
	unixSeekData = 3
	unixSeekHole = 4
)

func (r *recordFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	if _, _, ok := r.record(h.NodeId); ok {
		r.m.statfs(out)
		return fuse.OK
	}
	return r.RawFileSystem.StatFs(cancel, h, out)
}

// getattr fills out with the attributes of n and its timeout.
func (m *mount) getattr(ctx context.Context, n fs.Node, out *fuse.AttrOut) fuse.Status {
	a, err := m.t.Getattr(ctx, n)
	if err != nil {
		return fuse.Status(m.t.Report(err))
	}
	fillAttr(&out.Attr, a)
	out.SetTimeout(ttl(m.p.AttrTTL(n)))
	return fuse.OK
}

var _ fuse.RawFileSystem = (*recordFS)(nil)
