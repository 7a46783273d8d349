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
// Measured before this (one go-fuse node per record the kernel held, at
// most 131,072, older ones pruned): past the bound every pass over a
// directory rebuilt nodes (LOOKUP, FORGET and prune churn), so at 1M
// records first grep -r cost ~13x tmpfs and every warm pass was a first
// pass again.
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
// ls, ls -f and find -name never use: mount + ls of 1M records (make
// bench's open-warm row) took 9.1 s with entries for all of them, 4.2 s
// with names alone past this many (0.73 s is ls of the mounted directory
// once the kernel has cached the listing). Readers
// that use what they list (ls -l stats each page it reads; grep -r opens
// what fts read, up to 100,000 names at a time) keep getting entries: a
// use re-arms the count, so ls -l meets a page of names alone (and looks
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
	case caller.Uid == a.Uid:
		perm = a.Mode >> 6 & 0o7
	case caller.Gid == a.Gid:
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

// Changes to a record, or inside one, are refused the way the bridge
// refuses them for other immutable nodes.

// refuse logs and answers a change to record c.
func (r *recordFS) refuse(op string, c fs.Node) fuse.Status {
	return fuse.Status(r.m.t.Report(r.m.t.ReadOnly(op, c)))
}

func (r *recordFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if _, c, ok := r.record(in.NodeId); ok {
		return r.refuse("setattr", c)
	}
	return r.RawFileSystem.SetAttr(cancel, in, out)
}

func (r *recordFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	if _, c, ok := r.record(in.NodeId); ok {
		return r.refuse("setxattr", c)
	}
	return r.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (r *recordFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	if _, c, ok := r.record(h.NodeId); ok {
		return r.refuse("removexattr", c)
	}
	return r.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (r *recordFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	if _, c, ok := r.record(in.Oldnodeid); ok {
		return r.refuse("link", c)
	}
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Link(cancel, in, name, out)
}

func (r *recordFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	if _, c, ok := r.record(in.NodeId); ok {
		return r.refuse("fallocate", c)
	}
	return r.RawFileSystem.Fallocate(cancel, in)
}

func (r *recordFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if _, _, ok := r.record(in.NodeId); ok {
		return 0, fuse.EBADF // records are never open for writing
	}
	return r.RawFileSystem.Write(cancel, in, data)
}

func (r *recordFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if _, _, ok := r.record(in.NodeId); ok {
		return 0, fuse.EBADF
	}
	return r.RawFileSystem.Writev(cancel, in, data)
}

func (r *recordFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.OK // nothing to write
	}
	return r.RawFileSystem.Fsync(cancel, in)
}

func (r *recordFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	_, _, src := r.record(in.NodeId)
	_, _, dst := r.record(in.NodeIdOut)
	if src || dst {
		return 0, fuse.ENOTSUP // as the bridge answers: the kernel copies by reads and writes
	}
	return r.RawFileSystem.CopyFileRange(cancel, in)
}

func (r *recordFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.ENOSYS // as the bridge answers for nodes without Statx: the kernel uses GETATTR
	}
	return r.RawFileSystem.Statx(cancel, in, out)
}

func (r *recordFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if _, _, ok := r.record(h.NodeId); ok {
		return nil, fuse.EINVAL
	}
	return r.RawFileSystem.Readlink(cancel, h)
}

func (r *recordFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.Status(syscall.ENOTTY)
	}
	return r.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (r *recordFS) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.ENOTSUP // as the bridge answers: no locks
	}
	return r.RawFileSystem.GetLk(cancel, in, out)
}

func (r *recordFS) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.ENOTSUP // as the bridge answers: no locks
	}
	return r.RawFileSystem.SetLk(cancel, in)
}

func (r *recordFS) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if _, _, ok := r.record(in.NodeId); ok {
		return fuse.ENOTSUP // as the bridge answers: no locks
	}
	return r.RawFileSystem.SetLkw(cancel, in)
}

// Requests that name a record as a directory.

func (r *recordFS) notDir(id uint64) bool { _, _, ok := r.record(id); return ok }

func (r *recordFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	if r.notDir(in.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Mknod(cancel, in, name, out)
}

func (r *recordFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	if r.notDir(in.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Mkdir(cancel, in, name, out)
}

func (r *recordFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if r.notDir(h.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Unlink(cancel, h, name)
}

func (r *recordFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if r.notDir(h.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Rmdir(cancel, h, name)
}

func (r *recordFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	if r.notDir(in.NodeId) || r.notDir(in.Newdir) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (r *recordFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	if r.notDir(h.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Symlink(cancel, h, target, name, out)
}

func (r *recordFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if r.notDir(in.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Create(cancel, in, name, out)
}

func (r *recordFS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	if r.notDir(in.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.Tmpfile(cancel, in, out)
}

// Record directories are listed here, so that their listings hand out
// record entries without bridge nodes.

// recordListing is an open record directory.
type recordListing struct {
	mu   sync.Mutex
	d    *fs.Dir
	dir  *recordDir
	off  uint64       // where the stream stands: the Off of the last entry given
	held *fs.DirEntry // an entry that did not fit the last reply
}

func (r *recordFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	d := r.dir(in.NodeId)
	if d == nil {
		if r.notDir(in.NodeId) {
			return fuse.ENOTDIR
		}
		return r.RawFileSystem.OpenDir(cancel, in, out)
	}
	ctx := ctxOf(&in.InHeader, cancel)
	ls, err := r.m.t.OpenDir(ctx, d.node)
	if err != nil {
		return fuse.Status(r.m.t.Report(err))
	}
	flags := openFlags(r.m.p.Dir(d.node))
	if flags&(fuse.FOPEN_CACHE_DIR|fuse.FOPEN_KEEP_CACHE) != 0 {
		flags |= fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE // as the bridge does: a kept listing is one the kernel caches
	}
	r.mu.Lock()
	r.nextFh++
	fh := r.nextFh
	r.listings[fh] = &recordListing{d: ls.WithDots(ctx), dir: d}
	r.mu.Unlock()
	out.Fh = fh
	out.OpenFlags = flags
	return fuse.OK
}

func (r *recordFS) listing(id, fh uint64) *recordListing {
	if r.dir(id) == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.listings[fh]
}

func (r *recordFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if l := r.listing(in.NodeId, in.Fh); l != nil {
		return r.readDir(ctxOf(&in.InHeader, cancel), l, in.Offset, out, false)
	}
	return r.RawFileSystem.ReadDir(cancel, in, out)
}

func (r *recordFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if l := r.listing(in.NodeId, in.Fh); l != nil {
		return r.readDir(ctxOf(&in.InHeader, cancel), l, in.Offset, out, true)
	}
	return r.RawFileSystem.ReadDirPlus(cancel, in, out)
}

// readDir fills out from offset off of l: with plus, records come with
// their entries (node ID and attributes) unless the kernel has not been
// using them (see leanAfter); other entries, and records then, with names
// alone (node ID 0), which the kernel looks up when it uses them.
func (r *recordFS) readDir(ctx context.Context, l *recordListing, off uint64, out *fuse.DirEntryList, plus bool) fuse.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	if off != l.off {
		if err := l.d.Seek(off); err != nil {
			return fuse.EINVAL
		}
		l.off, l.held = off, nil
	}
	for {
		var e fs.DirEntry
		if l.held != nil {
			e, l.held = *l.held, nil
		} else {
			var ok bool
			if e, ok = l.d.Next(); !ok {
				return fuse.OK
			}
		}
		de := fuse.DirEntry{Name: e.Name, Mode: e.Mode, Ino: e.Ino, Off: e.Off}
		if !plus {
			if !out.AddDirEntry(de) {
				l.held = &e
				return fuse.OK
			}
			l.off = e.Off
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			l.held = &e
			return fuse.OK
		}
		l.off = e.Off
		if c, ok := l.d.Record(e); ok && !r.lean() {
			if r.entry(ctx, l.dir, c, eo) != fuse.OK {
				*eo = fuse.EntryOut{} // the name alone: the kernel's lookup gets the error
				continue
			}
			r.listed.Add(1)
		}
	}
}

func (r *recordFS) ReleaseDir(in *fuse.ReleaseIn) {
	if r.dir(in.NodeId) == nil {
		r.RawFileSystem.ReleaseDir(in)
		return
	}
	r.mu.Lock()
	delete(r.listings, in.Fh)
	r.mu.Unlock()
}

func (r *recordFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if r.dir(in.NodeId) != nil {
		return fuse.OK
	}
	return r.RawFileSystem.FsyncDir(cancel, in)
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
