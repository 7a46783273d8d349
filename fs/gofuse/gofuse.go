// Package gofuse serves an fs.Tree through go-fuse v2, recfs's default FUSE
// backend.
//
// It is built for large record directories: records are answered in front
// of go-fuse's node bridge, with their inode numbers as node IDs, so the
// server keeps nothing per record however many the kernel holds (see
// recordFS); listings are generated one entry at a time; and the kernel is
// told to cache names, attributes, listings and file contents for a long
// time, since record files never change. Read-only mounts that do not
// follow their sources also put the kernel in its no-open and no-flush
// modes (see fs.MountPolicy.NoOpen): a warm pass over records then sends
// no request at all.
//
// Those mounts also push record bytes into the kernel's page cache ahead
// of a reader going through a record directory in inode-number order, the
// order of grep -r and find past 10,000 entries (see pusher; fs policy
// PushAhead), so that such a reader's first pass sends few READs. make
// bench's mount-grep-first rows measure it (docs/BENCHMARKS.md).
package gofuse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/gofuse/internal/measure"
)

var _ fs.Mounter = Mount

// pushBytes bounds the record bytes stored in the kernel's page cache
// ahead of the last record a reader was seen reading (see pusher).
const pushBytes = 64 << 20

// maxRequest is MaxWrite, and max_read with it.
const maxRequest = 1 << 20

// ttl maps a policy timeout to go-fuse's: go-fuse replaces a zero timeout
// with the mount's default, so "do not cache" is one nanosecond (the
// kernel asks again on next use).
func ttl(d time.Duration) time.Duration {
	if d == 0 {
		return noCache
	}
	return d
}

// noCache is go-fuse's "no time".
const noCache = time.Nanosecond

// options returns the go-fuse options of a mount with policy p: the mount
// policy of fs (names, timeouts, read-only, allow_other) in go-fuse's
// terms.
func options(p *fs.Policy) *fusefs.Options {
	mp := p.Mount()
	entry, attr, neg := mp.EntryTimeout, mp.AttrTimeout, ttl(mp.NegativeTimeout)
	mflags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
	if mp.ReadOnly {
		mflags |= syscall.MS_RDONLY
	}
	lg := mp.Logger
	opts := &fusefs.Options{
		// Node IDs are inode numbers, which fs derives: records are
		// answered without bridge nodes (see recordFS), and a LOOKUP
		// in a record directory is recognised by the directory's ID.
		ExternalNodeID:  true,
		EntryTimeout:    &entry,
		AttrTimeout:     &attr,
		NegativeTimeout: &neg,
		MountOptions: fuse.MountOptions{
			FsName:               mp.FSName,
			Name:                 mp.Subtype,
			AllowOther:           mp.AllowOther,
			DisableXAttrs:        !mp.Xattrs,
			IgnoreSecurityLabels: mp.Xattrs,
			MaxWrite:             maxRequest,
			DirectMount:          true,
			// mount(2) flags for DirectMount: read-only at the VFS level
			// unless the mount takes appends.
			DirectMountFlags: mflags,
			// Listings always come with entries (READDIRPLUS, not
			// READDIRPLUS_AUTO, which falls back to READDIR after the
			// first page): grep -r and cat right after a mount then
			// send no LOOKUP per record (see recordFS.readDir).
			ExtraCapabilities: 0,
			Debug:             mp.Debug,
			PanicHandler: func(v any) fuse.Status {
				lg.WithField("panic", v).Errorf("fuse handler panicked\n%s", debug.Stack())
				return fuse.EIO
			},
		},
	}
	tree := p.Tree()
	if a, err := tree.Getattr(context.Background(), tree.Root()); err == nil {
		// The root's inode number as the tree derives it (go-fuse reports
		// the root's StableAttr, 0 unless set).
		opts.RootStableAttr = &fusefs.StableAttr{Ino: a.Ino}
	}
	if mp.DefaultPermissions {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
	}
	if w := writerOf(lg); w != nil {
		opts.MountOptions.Logger = log.New(w, "go-fuse: ", 0)
		opts.Logger = opts.MountOptions.Logger
	}
	return opts
}

// writerOf returns a debug-level writer of lg, if it has one.
func writerOf(lg logrus.FieldLogger) io.Writer {
	switch l := lg.(type) {
	case *logrus.Logger:
		return l.WriterLevel(logrus.DebugLevel)
	case *logrus.Entry:
		return l.WriterLevel(logrus.DebugLevel)
	}
	return nil
}

// Mount serves tree at dir and returns once the kernel has the mount. It
// tries mount(2) first and falls back to fusermount3.
func Mount(dir string, tree *fs.Tree, o fs.MountOptions) (fs.Server, error) {
	if o.ReadWrite != tree.Writable() {
		return nil, fmt.Errorf("gofuse: MountOptions.ReadWrite is %v but the tree's Options.ReadWrite is %v", o.ReadWrite, tree.Writable())
	}
	root := newRoot(tree, o)
	m := root.(*node).m
	mp := m.p.Mount()
	if mp.PushAhead > 0 {
		m.push = newPusher(tree, mp.PushAhead, pushBytes)
	}
	done := make(chan struct{})
	stopProfile := measure.ProfileCPU()
	srv, err := serve(dir, root, options(m.p), done)
	if err != nil {
		close(done)
		stopProfile()
		return nil, err
	}
	m.srv = srv
	if m.push != nil {
		m.push.store = measure.CountedStore(func(id uint64, data []byte) fuse.Status { return srv.InodeNotifyStoreCache(id, 0, data) })
		go m.push.run(done)
	}
	if mp.Follow {
		stop := startFollow(root.EmbeddedInode(), m, mp.FollowInterval)
		go func() { srv.Wait(); stop() }()
	}
	return &server{s: srv, done: done, m: m, stopProfile: stopProfile}, nil
}

type server struct {
	s           *fuse.Server
	done        chan struct{}
	once        sync.Once
	m           *mount
	stopProfile func() // ends the measure.CPUProfileEnv profile
}

func (s *server) Wait() error {
	s.s.Wait()
	s.once.Do(func() {
		close(s.done)
		s.stopProfile()
	})
	return nil
}

func (s *server) Unmount() error { return s.s.Unmount() }

// serve mounts root at dir and serves it, as fusefs.Mount does, with the
// request counter of measure.OpCountsEnv in between when that is set. done
// is closed once the server has stopped.
func serve(dir string, root fusefs.InodeEmbedder, opts *fusefs.Options, done <-chan struct{}) (*fuse.Server, error) {
	raw := measure.Counted(rawFS(root, opts), done)
	srv, err := fuse.NewServer(raw, dir, &opts.MountOptions)
	if err != nil {
		return nil, fusermountError(err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	return srv, nil
}

// rawFS is what a mount serves: go-fuse's node bridge over root, with
// records answered in front of it (see recordFS).
func rawFS(root fusefs.InodeEmbedder, opts *fusefs.Options) *recordFS {
	nd := root.(*node)
	r := newRecordFS(fusefs.NewNodeFS(root, opts), nd.m)
	nd.m.records = r
	if nd.n.Kind == fs.KindRecordDir {
		r.addDir(fuse.FUSE_ROOT_ID, nd.n)
	}
	return r
}

// newRoot returns the go-fuse root node of tree mounted with o.
func newRoot(tree *fs.Tree, o fs.MountOptions) fusefs.InodeEmbedder {
	p := fs.NewPolicy(tree, o)
	m := &mount{t: tree, p: p, noOpen: p.Mount().NoOpen}
	return &node{m: m, n: tree.Root()}
}

// mount is what every node of one mount shares.
type mount struct {
	t       *fs.Tree
	p       *fs.Policy   // what the kernel is told: fs decides, this adapter translates
	noOpen  bool         // answer OPEN and FLUSH with ENOSYS (read-only mounts without following)
	records *recordFS    // nil: records are bridge nodes (tests that drive nodes alone)
	push    *pusher      // nil: record bytes are not pushed ahead of readers
	srv     *fuse.Server // once serving
	live    atomic.Int64 // nodes the kernel references (for tests)

	forgot atomic.Pointer[func()] // tests: called after every forget
}

// node is the kernel-facing node of one tree entry. It lives only as long
// as the kernel references the entry; go-fuse drops it on FORGET.
type node struct {
	fusefs.Inode
	m *mount
	n fs.Node
}

var (
	_ fusefs.NodeLookuper       = (*node)(nil)
	_ fusefs.NodeOnForgetter    = (*node)(nil)
	_ fusefs.NodeGetattrer      = (*node)(nil)
	_ fusefs.NodeOpendirHandler = (*node)(nil)
	_ fusefs.NodeOpener         = (*node)(nil)
	_ fusefs.NodeReader         = (*node)(nil)
	_ fusefs.NodeFlusher        = (*node)(nil)
	_ fusefs.NodeGetxattrer     = (*node)(nil)
	_ fusefs.NodeListxattrer    = (*node)(nil)
	_ fusefs.NodeStatfser       = (*node)(nil)
	_ fusefs.NodeSetattrer      = (*node)(nil)
	_ fusefs.NodeCreater        = (*node)(nil)
	_ fusefs.NodeMkdirer        = (*node)(nil)
	_ fusefs.NodeMknoder        = (*node)(nil)
	_ fusefs.NodeUnlinker       = (*node)(nil)
	_ fusefs.NodeRmdirer        = (*node)(nil)
	_ fusefs.NodeRenamer        = (*node)(nil)
	_ fusefs.NodeSymlinker      = (*node)(nil)
	_ fusefs.NodeLinker         = (*node)(nil)
	_ fusefs.NodeSetxattrer     = (*node)(nil)
	_ fusefs.NodeRemovexattrer  = (*node)(nil)
)

// fillAttr copies tree attributes into a FUSE attribute block.
func fillAttr(out *fuse.Attr, a fs.Attr) {
	out.Ino = a.Ino
	out.Mode = a.Mode
	out.Size = uint64(a.Size)
	out.Blocks = (uint64(a.Size) + 511) / 512
	out.Blksize = 4096
	out.Nlink = a.Nlink
	out.Owner = fuse.Owner{Uid: a.UID, Gid: a.GID}
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

// Lookup parses name with the tree and returns a fresh, non-persistent
// inode; go-fuse merges it with a live one of the same inode number.
func (nd *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return nd.lookup(ctx, name, out)
}

func (nd *node) lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	c, err := nd.m.t.Lookup(ctx, nd.n, name)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	return nd.child(ctx, c, out)
}

// child makes the kernel-facing inode of the tree entry c, a child of nd,
// and fills out with its attributes and cache timeouts. go-fuse merges the
// new inode with a live one of the same inode number.
func (nd *node) child(ctx context.Context, c fs.Node, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	a, err := nd.m.t.Getattr(ctx, c)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	fillAttr(&out.Attr, a)
	nd.m.timeouts(c, out)
	ch := &node{m: nd.m, n: c}
	in := nd.NewInode(ctx, ch, fusefs.StableAttr{Mode: a.Mode & syscall.S_IFMT, Ino: a.Ino})
	if in.Operations() == ch {
		nd.m.live.Add(1)
		nd.m.t.Hold(c)
	}
	if c.Kind == fs.KindRecordDir && nd.m.records != nil {
		// Before the kernel learns the node's ID (its inode number).
		nd.m.records.addDir(a.Ino, c)
	}
	return in, 0
}

// OnForget is called when the kernel has forgotten the node: the tree may
// then close a record file deleted meanwhile.
func (nd *node) OnForget() {
	nd.m.live.Add(-1)
	nd.m.t.Forget(nd.n)
	if f := nd.m.forgot.Load(); f != nil {
		(*f)()
	}
}

// Getattr reports the entry's attributes.
func (nd *node) Getattr(ctx context.Context, _ fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return syscall.Errno(nd.m.getattr(ctx, nd.n, out))
}

// OpendirHandle opens a streamed listing, with the kernel cache flags the
// policy gives (record directories never change: FOPEN_CACHE_DIR).
func (nd *node) OpendirHandle(ctx context.Context, _ uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	d, err := nd.m.t.OpenDir(ctx, nd.n)
	if err != nil {
		return nil, 0, nd.m.t.Report(err)
	}
	flags := openFlags(nd.m.p.Dir(nd.n))
	return &dirHandle{d: d.WithDots(ctx), nd: nd}, flags, 0
}

// dirHandle streams a directory to the kernel.
type dirHandle struct {
	d  *fs.Dir
	nd *node
}

var (
	_ fusefs.FileLookuper     = (*dirHandle)(nil)
	_ fusefs.FileReaddirenter = (*dirHandle)(nil)
	_ fusefs.FileSeekdirer    = (*dirHandle)(nil)
	_ fusefs.FileReleasedirer = (*dirHandle)(nil)
)

func (h *dirHandle) Readdirent(context.Context) (*fuse.DirEntry, syscall.Errno) {
	e, ok := h.d.Next()
	if !ok {
		return nil, 0
	}
	return &fuse.DirEntry{Name: e.Name, Mode: e.Mode, Ino: e.Ino, Off: e.Off}, 0
}

// Lookup makes the entry of one name of a READDIRPLUS listing.
func (h *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return h.nd.lookup(ctx, name, out)
}

func (h *dirHandle) Seekdir(_ context.Context, off uint64) syscall.Errno {
	return fs.Errno(h.d.Seek(off))
}

func (h *dirHandle) Releasedir(context.Context, uint32) { h.d.Close() }

// Open opens a file for reading (or a pending file for writing), with the
// kernel cache flags the policy gives: record contents never change, so
// the kernel keeps its page cache across opens and sends no FLUSH on close.
func (nd *node) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	if nd.n.Kind == fs.KindPending && fs.OpensForWrite(flags) {
		h, err := nd.m.t.OpenWrite(ctx, nd.n)
		if err != nil {
			return nil, 0, nd.m.t.Report(err)
		}
		return &writeHandle{m: nd.m, h: h}, openFlags(nd.m.p.File(nd.n, true)), 0
	}
	f, fl, errno := nd.m.openRead(ctx, nd.n, flags)
	if f == nil {
		return nil, 0, errno
	}
	return f, fl, 0
}

// openRead opens the file n for reading, as Open does for every file but
// a pending one opened to write: a request to write fails, and a no-open
// mount answers ENOSYS.
func (m *mount) openRead(ctx context.Context, n fs.Node, flags uint32) (*fileHandle, uint32, syscall.Errno) {
	if fs.OpensForWrite(flags) {
		return nil, 0, m.t.Report(m.t.ReadOnly("open for writing", n))
	}
	if m.noOpen {
		// The kernel then stops sending OPEN (and RELEASE) for regular
		// files of this mount: opens cost no round trip, reads come
		// without a handle (see Read), and cached pages are kept
		// (FOPEN_KEEP_CACHE is what the kernel assumes).
		return nil, 0, syscall.ENOSYS
	}
	h, err := m.t.Open(ctx, n)
	if err != nil {
		return nil, 0, m.t.Report(err)
	}
	return &fileHandle{h: h}, openFlags(m.p.File(n, false)), 0
}

// openFlags maps the policy's open hints to FOPEN_* flags.
func openFlags(h fs.OpenHints) uint32 {
	var fl uint32
	if h.KeepCache {
		fl |= fuse.FOPEN_KEEP_CACHE
	}
	if h.DirectIO {
		fl |= fuse.FOPEN_DIRECT_IO
	}
	if h.NoFlush {
		fl |= fuse.FOPEN_NOFLUSH
	}
	if h.CacheDir {
		fl |= fuse.FOPEN_CACHE_DIR
	}
	return fl
}

// fileHandle is an open file.
type fileHandle struct{ h fs.Handle }

var _ fusefs.FileReleaser = (*fileHandle)(nil)

func (f *fileHandle) Release(context.Context) syscall.Errno { return fs.Errno(f.h.Close()) }

// Read does one ReadAt into the request buffer.
func (nd *node) Read(ctx context.Context, fh fusefs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	var r io.ReaderAt
	switch f := fh.(type) {
	case *fileHandle:
		r = f.h
	case *writeHandle:
		r = f.h
	case nil:
	default:
		return nil, syscall.EBADF
	}
	return nd.m.read(ctx, nd.n, r, dest, off)
}

// read reads n at off through the open file r, or, when r is nil, without
// a handle, which only a no-open mount sends.
func (m *mount) read(ctx context.Context, n fs.Node, r io.ReaderAt, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r == nil {
		if !m.noOpen {
			return nil, syscall.EBADF
		}
		// No-open: the read opens, reads and closes on its own.
		r = readerAt{ctx: ctx, t: m.t, n: n}
	}
	k, err := fs.ReadHandle(ctx, r, dest, off) // an INTERRUPT cancels ctx: a long read stops
	if err != nil && err != io.EOF {
		return nil, m.t.Report(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// readerAt reads a file of the tree without a handle.
type readerAt struct {
	ctx context.Context
	t   *fs.Tree
	n   fs.Node
}

func (r readerAt) ReadAt(p []byte, off int64) (int, error) { return r.t.ReadAt(r.ctx, r.n, p, off) }

// Flush answers close(2). Pending files append their record (see
// writeHandle.Flush); other files have nothing to flush. A no-open mount
// answers ENOSYS, after which the kernel sends no FLUSH at all on this
// mount: its opens have no handle to carry FOPEN_NOFLUSH.
func (nd *node) Flush(ctx context.Context, fh fusefs.FileHandle) syscall.Errno {
	if f, ok := fh.(fusefs.FileFlusher); ok {
		return f.Flush(ctx)
	}
	return nd.m.flush()
}

// flush answers the FLUSH of a file with nothing to flush.
func (m *mount) flush() syscall.Errno {
	if m.noOpen {
		return syscall.ENOSYS
	}
	return 0
}

// Statfs reports what the policy says: a read-only file system with no
// free space.
func (nd *node) Statfs(_ context.Context, out *fuse.StatfsOut) syscall.Errno {
	nd.m.statfs(out)
	return 0
}

func (m *mount) statfs(out *fuse.StatfsOut) {
	st := m.p.Statfs()
	out.Bsize, out.Frsize, out.NameLen = st.Bsize, st.Frsize, st.NameLen
}

// Getxattr serves the attribute the policy gives (user.recfs.*, when
// xattrs are on; ENOTSUP when off, which go-fuse's DisableXAttrs already
// answers before asking).
func (nd *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return nd.m.getxattr(ctx, nd.n, attr, dest)
}

func (m *mount) getxattr(ctx context.Context, n fs.Node, attr string, dest []byte) (uint32, syscall.Errno) {
	v, err := m.p.Xattr(ctx, n, attr)
	if errors.Is(err, fs.ErrXattrsOff) {
		return 0, syscall.ENOTSUP
	}
	if err != nil {
		return 0, m.t.Report(err)
	}
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// Listxattr lists the attribute names the policy gives (none when xattrs
// are off).
func (nd *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return nd.m.listxattr(ctx, nd.n, dest)
}

func (m *mount) listxattr(ctx context.Context, n fs.Node, dest []byte) (uint32, syscall.Errno) {
	names, err := m.p.XattrNames(ctx, n)
	if errors.Is(err, fs.ErrXattrsOff) {
		return 0, 0
	}
	if err != nil {
		return 0, m.t.Report(err)
	}
	var size int
	for _, x := range names {
		size += len(x) + 1
	}
	if len(dest) == 0 {
		return uint32(size), 0
	}
	if len(dest) < size {
		return uint32(size), syscall.ERANGE
	}
	b := dest[:0]
	for _, x := range names {
		b = append(append(b, x...), 0)
	}
	return uint32(len(b)), 0
}

// Changes: without --rw every change fails with EROFS, logged once per
// operation and entry. With --rw (see write.go) files can be created in
// record directories and record files made with mkdir; everything else
// fails with EPERM.

func (nd *node) readOnly(op string) syscall.Errno { return nd.m.t.Report(nd.m.t.ReadOnly(op, nd.n)) }

func (nd *node) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return nil, nd.readOnly("mknod")
}

func (nd *node) Rmdir(context.Context, string) syscall.Errno { return nd.readOnly("rmdir") }

func (nd *node) Rename(context.Context, string, fusefs.InodeEmbedder, string, uint32) syscall.Errno {
	return nd.readOnly("rename")
}

func (nd *node) Symlink(context.Context, string, string, *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return nil, nd.readOnly("symlink")
}

func (nd *node) Link(context.Context, fusefs.InodeEmbedder, string, *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	return nil, nd.readOnly("link")
}

func (nd *node) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return nd.readOnly("setxattr")
}

func (nd *node) Removexattr(context.Context, string) syscall.Errno { return nd.readOnly("removexattr") }
