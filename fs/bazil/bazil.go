//go:build linux

// Package bazil serves an fs.Tree through bazil.org/fuse, recfs's second
// FUSE backend (selected with --backend bazil).
//
// It bridges the same backend-neutral tree as fs/gofuse and gives the
// kernel the same attributes, inode numbers, errnos and extended
// attributes. bazil.org/fuse has fewer knobs than go-fuse, and this backend
// inherits its limits:
//
//   - No READDIRPLUS: `ls -l` costs one LOOKUP per entry after the listing
//     (bazil neither negotiates FUSE_DO_READDIRPLUS nor serves the opcode).
//     Past a few hundred thousand records this dominates, where gofuse
//     lists with entries.
//   - No no-open mode: every open of a record is an OPEN round trip (with
//     FOPEN_KEEP_CACHE and FOPEN_NOFLUSH, so no READ or FLUSH follows on a
//     warm pass, and RELEASE is asynchronous). Answering OPEN with ENOSYS
//     would put the kernel in no-open mode, but its reads then carry file
//     handle 0, which bazil reserves and answers with ESTALE before any
//     node sees the request (fs/serve.go, getHandle): handle-less reads
//     cannot be served. A warm `grep -r` therefore pays one synchronous
//     round trip per record where gofuse pays none.
//   - No readdir pagination: bazil asks for a directory's whole listing at
//     once (ReadDirAll) and keeps it, encoded (32 bytes per 6-digit record
//     name), for as long as the directory stays open; building it also
//     needs a transient []fuse.Dirent and bazil's growing encode buffer:
//     listing a record directory costs server memory in proportion to its
//     records (fs/gofuse streams). Beyond a few million records per file,
//     prefer fs/gofuse.
//   - Requests are capped at 128 KiB (reads of larger records take several
//     round trips).
//   - No negative entries: a failed lookup is not cached by the kernel, so
//     MountOptions.NegativeTimeout is ignored.
//   - The mount always goes through fusermount3 (Debian package fuse3).
//
// Every node is a small comparable value holding an fs.Node: lookups parse
// the name with the tree and return a fresh value, which bazil keeps only
// while the kernel references it (two names of one record, "42" and
// "000042", are the same value and so the same kernel node).
package bazil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"

	"github.com/recfs/recfs/fs"
)

var _ fs.Mounter = Mount

// maxReadahead is the kernel's usual default. bazil sends the value of its
// option in the INIT reply as is, and 0 would turn readahead off.
const maxReadahead = 128 << 10

// openNoFlush is the kernel's FOPEN_NOFLUSH (Linux 5.16): no FLUSH request
// on close. bazil.org/fuse does not name it, but it passes open flags to
// the kernel unchanged.
const openNoFlush fuse.OpenResponseFlags = 1 << 5

// options returns the bazil mount options of a mount with policy mp: the
// mount policy of fs (file system name and type, read-only, allow_other
// with default_permissions) in bazil's terms, plus 128 KiB readahead and
// asynchronous reads.
func options(mp fs.MountPolicy) []fuse.MountOption {
	opts := []fuse.MountOption{
		fuse.FSName(mp.FSName),
		fuse.Subtype(mp.Subtype),
		fuse.MaxReadahead(maxReadahead),
		fuse.AsyncRead(),
	}
	if mp.ReadOnly {
		opts = append(opts, fuse.ReadOnly())
	}
	if mp.AllowOther {
		opts = append(opts, fuse.AllowOther())
	}
	if mp.DefaultPermissions {
		opts = append(opts, fuse.DefaultPermissions())
	}
	return opts
}

// config returns the serve configuration: bazil's request log goes to the
// logger at debug level when the policy's Debug is set, and nowhere
// otherwise.
func config(mp fs.MountPolicy) *bazilfs.Config {
	c := &bazilfs.Config{Debug: func(any) {}}
	if mp.Debug {
		lg := mp.Logger.WithField("backend", "bazil")
		c.Debug = func(msg any) { lg.Debug(msg) }
	}
	return c
}

// Unmount retries: fusermount3 -u fails with EBUSY while a file is open or
// a request is in flight.
const (
	unmountTries = 20
	unmountPause = 100 * time.Millisecond
	serveDrain   = 5 * time.Second
)

// Mount serves tree at dir through fusermount3 and returns once the mount
// answers: bazil's fuse.Mount returns after the kernel's INIT, and Mount
// then opens a file through the running server to turn the kernel's POLL
// requests off (see disablePoll).
func Mount(dir string, tree *fs.Tree, o fs.MountOptions) (fs.Server, error) {
	if o.ReadWrite != tree.Writable() {
		return nil, fmt.Errorf("bazil: MountOptions.ReadWrite is %v but the tree's Options.ReadWrite is %v", o.ReadWrite, tree.Writable())
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fsys := newFS(tree, o)
	mp := fsys.root.m.p.Mount()
	conn, err := fuse.Mount(abs, options(mp)...)
	if err != nil {
		return nil, err
	}
	s := &server{dir: abs, done: make(chan struct{})}
	srv := bazilfs.New(conn, config(mp))
	fsys.root.m.pollFile.Store(true)
	go func() {
		s.err = servedUntilUnmount(srv.Serve(fsys), abs)
		// Closing the device aborts the connection if Serve stopped
		// early, so nothing waits on a server that is gone.
		conn.Close()
		close(s.done)
	}()
	// Turning POLL off goes through the server, so it also proves that the
	// mount answers.
	err = disablePoll(filepath.Join(abs, pollFileName))
	fsys.root.m.pollFile.Store(false)
	if err != nil {
		_ = s.Unmount()
		return nil, err
	}
	if mp.Follow {
		stop := startFollow(srv, fsys, tree, mp.FollowInterval)
		go func() { <-s.done; stop() }()
	}
	return s, nil
}

// servedUntilUnmount maps Serve's result: reading /dev/fuse may fail with
// ECONNABORTED instead of ENODEV when the kernel tears the connection down
// for an ordinary unmount, after which the server must not exit with an
// error. That is a clean end when dir is no longer a dead mount; an abort through fusectl leaves the mount in place (stat fails
// with ENOTCONN) and stays an error.
func servedUntilUnmount(err error, dir string) error {
	if errors.Is(err, syscall.ECONNABORTED) {
		if _, serr := os.Stat(dir); serr == nil {
			return nil
		}
	}
	return err
}

// server is a live bazil mount.
type server struct {
	dir  string
	done chan struct{} // closed when Serve has returned
	err  error         // Serve's result, set before done is closed
}

// Wait blocks until the file system is unmounted.
func (s *server) Wait() error {
	<-s.done
	return s.err
}

// Unmount unmounts the file system with fusermount3 -u, retrying while it
// is busy, and waits (a few seconds at most) for the server to stop.
func (s *server) Unmount() error {
	var err error
	for i := 0; i < unmountTries; i++ {
		select {
		case <-s.done:
			return nil // already unmounted
		default:
		}
		if err = fuse.Unmount(s.dir); err == nil {
			break
		}
		time.Sleep(unmountPause)
	}
	if err != nil {
		return err
	}
	select {
	case <-s.done:
	case <-time.After(serveDrain):
	}
	return nil
}

// fileSystem is the bazil file system of one tree.
type fileSystem struct {
	root node
}

var (
	_ bazilfs.FS         = (*fileSystem)(nil)
	_ bazilfs.FSStatfser = (*fileSystem)(nil)
)

// newFS returns the bazil file system of tree mounted with o.
func newFS(tree *fs.Tree, o fs.MountOptions) *fileSystem {
	m := &mount{t: tree, p: fs.NewPolicy(tree, o)}
	return &fileSystem{root: node{m: m, n: tree.Root()}}
}

// Root returns the root node.
func (f *fileSystem) Root() (bazilfs.Node, error) { return f.root, nil }

// Statfs reports what the policy says: a read-only file system with no
// free space.
func (f *fileSystem) Statfs(_ context.Context, _ *fuse.StatfsRequest, resp *fuse.StatfsResponse) error {
	st := f.root.m.p.Statfs()
	resp.Bsize, resp.Frsize, resp.Namelen = st.Bsize, st.Frsize, st.NameLen
	return nil
}

// mount is what every node of one mount shares.
type mount struct {
	t        *fs.Tree
	p        *fs.Policy  // what the kernel is told: fs decides, this adapter translates
	pollFile atomic.Bool // pollFileName can be looked up

	liveMu sync.Mutex
	live   map[fs.Node]struct{} // entries whose node the kernel holds
}

// node is the kernel-facing node of one tree entry. It is a comparable
// value: bazil uses it as a map key, so equal entries share a node ID.
type node struct {
	m *mount
	n fs.Node
}

var (
	_ bazilfs.Node                = node{}
	_ bazilfs.NodeRequestLookuper = node{}
	_ bazilfs.NodeOpener          = node{}
	_ bazilfs.NodeGetxattrer      = node{}
	_ bazilfs.NodeListxattrer     = node{}
	_ bazilfs.NodeSetattrer       = node{}
	_ bazilfs.NodeCreater         = node{}
	_ bazilfs.NodeMkdirer         = node{}
	_ bazilfs.NodeMknoder         = node{}
	_ bazilfs.NodeRemover         = node{}
	_ bazilfs.NodeRenamer         = node{}
	_ bazilfs.NodeSymlinker       = node{}
	_ bazilfs.NodeLinker          = node{}
	_ bazilfs.NodeSetxattrer      = node{}
	_ bazilfs.NodeRemovexattrer   = node{}
	_ bazilfs.NodeForgetter       = node{}
)

// fillAttr copies tree attributes into a bazil attribute block.
func fillAttr(out *fuse.Attr, a fs.Attr, valid time.Duration) {
	out.Valid = valid
	out.Inode = a.Ino
	out.Size = uint64(a.Size)
	out.Blocks = (uint64(a.Size) + 511) / 512
	out.BlockSize = 4096
	out.Nlink = a.Nlink
	out.Uid, out.Gid = a.UID, a.GID
	out.Atime, out.Mtime, out.Ctime = a.Atime, a.Mtime, a.Ctime
	out.Mode = fs.FileMode(a.Mode) // a tree holds directories and regular files
}

// Attr reports the entry's attributes, valid for the attribute timeout.
func (nd node) Attr(ctx context.Context, a *fuse.Attr) error {
	at, err := nd.m.t.Getattr(ctx, nd.n)
	if err != nil {
		return nd.m.t.Report(err)
	}
	fillAttr(a, at, nd.m.p.AttrTTL(nd.n))
	return nil
}

// Lookup parses name with the tree and returns a fresh node value; bazil
// then asks it for its attributes. The entry is valid for the entry
// timeout.
func (nd node) Lookup(ctx context.Context, req *fuse.LookupRequest, resp *fuse.LookupResponse) (bazilfs.Node, error) {
	if req.Name == pollFileName && nd.m.pollFile.Load() && nd.n == nd.m.t.Root() {
		resp.EntryValid = 0 // not cached: gone once Mount returns
		return pollFile{m: nd.m}, nil
	}
	c, err := nd.m.t.Lookup(ctx, nd.n, req.Name)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	resp.EntryValid = nd.m.p.Entry(c).Entry
	return nd.m.node(c), nil
}

// node returns the node of the tree entry c, which is about to be handed
// to the kernel, and tells the tree the first time (bazil keeps one node
// per distinct value until the kernel forgets it; see Forget).
func (m *mount) node(c fs.Node) node {
	m.liveMu.Lock()
	if _, ok := m.live[c]; !ok {
		if m.live == nil {
			m.live = make(map[fs.Node]struct{})
		}
		m.live[c] = struct{}{}
		m.t.Hold(c)
	}
	m.liveMu.Unlock()
	return node{m: m, n: c}
}

// Forget is called when the kernel has forgotten the node: the tree may
// then close a record file deleted meanwhile.
func (nd node) Forget() {
	nd.m.liveMu.Lock()
	_, ok := nd.m.live[nd.n]
	delete(nd.m.live, nd.n)
	nd.m.liveMu.Unlock()
	if ok {
		nd.m.t.Forget(nd.n)
	}
}

// Open opens a directory for listing or a file for reading (or a pending
// file for writing), with the kernel cache flags the policy gives: record
// directories and record files never change, so the kernel may cache
// listings (CACHE_DIR) and contents (KEEP_CACHE); no file sends FLUSH on
// close.
func (nd node) Open(ctx context.Context, req *fuse.OpenRequest, resp *fuse.OpenResponse) (bazilfs.Handle, error) {
	if req.Dir || nd.n.IsDir() {
		d, err := nd.m.t.OpenDir(ctx, nd.n)
		if err != nil {
			return nil, nd.m.t.Report(err)
		}
		d.WithDots(ctx)
		resp.Flags |= openFlags(nd.m.p.Dir(nd.n))
		return &dirHandle{m: nd.m, n: nd.n, d: d}, nil
	}
	if nd.n.Kind == fs.KindPending && fs.OpensForWrite(uint32(req.Flags)) {
		h, err := nd.m.t.OpenWrite(ctx, nd.n)
		if err != nil {
			return nil, nd.m.t.Report(err)
		}
		resp.Flags |= openFlags(nd.m.p.File(nd.n, true))
		return &writeHandle{m: nd.m, h: h}, nil
	}
	if fs.OpensForWrite(uint32(req.Flags)) {
		return nil, nd.refuse("open for writing")
	}
	h, err := nd.m.t.Open(ctx, nd.n)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	resp.Flags |= openFlags(nd.m.p.File(nd.n, false))
	return &fileHandle{m: nd.m, h: h}, nil
}

// openFlags maps the policy's open hints to bazil's open response flags.
func openFlags(h fs.OpenHints) fuse.OpenResponseFlags {
	var fl fuse.OpenResponseFlags
	if h.KeepCache {
		fl |= fuse.OpenKeepCache
	}
	if h.DirectIO {
		fl |= fuse.OpenDirectIO
	}
	if h.NoFlush {
		fl |= openNoFlush
	}
	if h.CacheDir {
		fl |= fuse.OpenCacheDir
	}
	return fl
}

// dirHandle is an open directory. bazil reads a listing whole, so
// ReadDirAll materialises every entry of the directory in memory (bazil
// has no readdir pagination); a rewind to offset 0 lists afresh.
type dirHandle struct {
	m  *mount
	n  fs.Node
	mu sync.Mutex
	d  *fs.Dir // opened by Open, consumed by the first ReadDirAll
}

var (
	_ bazilfs.HandleReadDirAller = (*dirHandle)(nil)
	_ bazilfs.HandleReleaser     = (*dirHandle)(nil)
)

// ReadDirAll returns every entry of the directory.
func (h *dirHandle) ReadDirAll(ctx context.Context) ([]fuse.Dirent, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.d
	h.d = nil
	if d == nil {
		var err error
		if d, err = h.m.t.OpenDir(ctx, h.n); err != nil {
			return nil, h.m.t.Report(err)
		}
		d.WithDots(ctx)
	}
	defer d.Close()
	out := make([]fuse.Dirent, 0, d.Len())
	for {
		e, ok := d.Next()
		if !ok {
			return out, nil
		}
		typ := fuse.DT_File
		if e.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			typ = fuse.DT_Dir
		}
		out = append(out, fuse.Dirent{Inode: e.Ino, Type: typ, Name: e.Name})
	}
}

// Release closes the directory if it was never listed.
func (h *dirHandle) Release(context.Context, *fuse.ReleaseRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.d != nil {
		h.d.Close()
		h.d = nil
	}
	return nil
}

// fileHandle is an open file of the tree.
type fileHandle struct {
	m *mount
	h fs.Handle
}

var (
	_ bazilfs.HandleReader   = (*fileHandle)(nil)
	_ bazilfs.HandleReleaser = (*fileHandle)(nil)
	_ bazilfs.HandlePoller   = (*fileHandle)(nil)
)

// Poll answers ENOSYS, so the kernel stops sending POLL for the whole
// mount and reports files as always ready. bazil's own fallback claims
// readiness but keeps the kernel asking, once per epoll_wait: a process
// that serves the mount and also opens its files (Go registers them with
// its netpoller) then deadlocks, its epoll_wait waiting for an answer that
// only its own stalled scheduler could give.
func (f *fileHandle) Poll(context.Context, *fuse.PollRequest, *fuse.PollResponse) error {
	return syscall.ENOSYS
}

// Read does one ReadAt into the response buffer (at most 128 KiB, bazil's
// request size).
func (f *fileHandle) Read(ctx context.Context, req *fuse.ReadRequest, resp *fuse.ReadResponse) error {
	if req.Offset < 0 || req.Size < 0 {
		return syscall.EINVAL
	}
	buf := resp.Data[:0]
	if cap(buf) < req.Size {
		buf = make([]byte, 0, req.Size)
	}
	buf = buf[:req.Size]
	n, err := fs.ReadHandle(ctx, f.h, buf, req.Offset) // an INTERRUPT cancels ctx: a long read stops
	if err != nil && !errors.Is(err, io.EOF) {
		return f.m.t.Report(err)
	}
	resp.Data = buf[:n]
	return nil
}

// Release closes the file.
func (f *fileHandle) Release(context.Context, *fuse.ReleaseRequest) error {
	if err := f.h.Close(); err != nil {
		return f.m.t.Report(err)
	}
	return nil
}

// Getxattr serves the attribute the policy gives (user.recfs.*, when
// xattrs are on). When they are off it answers ENOSYS, which the kernel
// turns into ENOTSUP and remembers, so it stops asking (go-fuse's
// DisableXAttrs does the same).
func (nd node) Getxattr(ctx context.Context, req *fuse.GetxattrRequest, resp *fuse.GetxattrResponse) error {
	v, err := nd.m.p.Xattr(ctx, nd.n, req.Name)
	switch {
	case errors.Is(err, fs.ErrXattrsOff):
		return syscall.ENOSYS
	case errors.Is(err, fs.ErrNoXattr):
		return fuse.ErrNoXattr
	case err != nil:
		return nd.m.t.Report(err)
	}
	resp.Xattr = append(resp.Xattr[:0], v...)
	return nil
}

// Listxattr lists the attribute names the policy gives (ENOSYS, seen as
// ENOTSUP, when xattrs are off). bazil answers ERANGE itself when the
// caller's buffer is too small.
func (nd node) Listxattr(ctx context.Context, _ *fuse.ListxattrRequest, resp *fuse.ListxattrResponse) error {
	names, err := nd.m.p.XattrNames(ctx, nd.n)
	if errors.Is(err, fs.ErrXattrsOff) {
		return syscall.ENOSYS
	}
	if err != nil {
		return nd.m.t.Report(err)
	}
	for _, x := range names {
		resp.Append(x)
	}
	return nil
}

// Changes: without --rw every change fails with EROFS (the kernel already
// refuses most of them on an "ro" mount). With --rw (see write.go) files
// can be created in record directories and record files made with mkdir;
// everything else fails with EPERM. Refusals are logged once.

func (nd node) refuse(op string) error { return nd.m.t.Report(nd.m.t.ReadOnly(op, nd.n)) }

// Mknod is refused.
func (nd node) Mknod(context.Context, *fuse.MknodRequest) (bazilfs.Node, error) {
	return nil, nd.refuse("mknod")
}

// Rename is refused.
func (nd node) Rename(context.Context, *fuse.RenameRequest, bazilfs.Node) error {
	return nd.refuse("rename")
}

// Symlink is refused.
func (nd node) Symlink(context.Context, *fuse.SymlinkRequest) (bazilfs.Node, error) {
	return nil, nd.refuse("symlink")
}

// Link is refused.
func (nd node) Link(context.Context, *fuse.LinkRequest, bazilfs.Node) (bazilfs.Node, error) {
	return nil, nd.refuse("link")
}

// Setxattr is refused.
func (nd node) Setxattr(context.Context, *fuse.SetxattrRequest) error { return nd.refuse("setxattr") }

// Removexattr is refused.
func (nd node) Removexattr(context.Context, *fuse.RemovexattrRequest) error {
	return nd.refuse("removexattr")
}
