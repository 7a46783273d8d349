//go:build linux

package bazil

import (
	"context"
	"errors"
	"io"
	"syscall"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"

	"github.com/recfs/recfs/fs"
)

// Writing (--rw). A file created in a record directory is a pending record
// of the tree; the FLUSH that close(2) waits for appends it, so the record
// is in the source file when close returns. Nodes that change (record
// directories, .recfs, pending files) are cached by the kernel for no time
// and get no directory or page cache; a pending file's name is not cached
// either, since it disappears once the file is released. bazil does not
// cache failed lookups, so a new record's name is found at once.

var _ bazilfs.NodeFsyncer = node{}

// Create makes a pending record in a record directory.
func (nd node) Create(ctx context.Context, req *fuse.CreateRequest, resp *fuse.CreateResponse) (bazilfs.Node, bazilfs.Handle, error) {
	c, h, err := nd.m.t.Create(ctx, nd.n, req.Name)
	if err != nil {
		return nil, nil, nd.m.t.Report(err)
	}
	resp.EntryValid = nd.m.p.Entry(c).Entry
	resp.Flags |= openFlags(nd.m.p.File(c, true))
	return nd.m.node(c), &writeHandle{m: nd.m, h: h}, nil
}

// Mkdir makes a new record file in a mirrored directory.
func (nd node) Mkdir(ctx context.Context, req *fuse.MkdirRequest) (bazilfs.Node, error) {
	c, err := nd.m.t.Mkdir(ctx, nd.n, req.Name)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	return nd.m.node(c), nil
}

// Remove discards a pending file (unlink); everything else is refused.
func (nd node) Remove(ctx context.Context, req *fuse.RemoveRequest) error {
	if req.Dir {
		return nd.refuse("rmdir")
	}
	return nd.m.errOf(nd.m.t.Unlink(ctx, nd.n, req.Name))
}

// errOf reports err to the tree and returns its errno, or nil.
func (m *mount) errOf(err error) error {
	if err == nil {
		return nil
	}
	return m.t.Report(err)
}

// Setattr changes the size of a pending file (O_TRUNC, ftruncate) and
// accepts mode, owner and time changes of it as no-ops (cp -p, touch);
// every other node is immutable.
func (nd node) Setattr(ctx context.Context, req *fuse.SetattrRequest, resp *fuse.SetattrResponse) error {
	if nd.n.Kind != fs.KindPending {
		return nd.refuse("setattr")
	}
	if req.Valid.Size() {
		if err := nd.m.t.Truncate(ctx, nd.n, int64(req.Size)); err != nil {
			return nd.m.t.Report(err)
		}
	}
	return nd.Attr(ctx, &resp.Attr)
}

// Fsync appends a pending file now, durably. bazil names the node, not
// the handle, so it goes through the tree.
func (nd node) Fsync(ctx context.Context, _ *fuse.FsyncRequest) error {
	return nd.m.errOf(nd.m.t.Fsync(ctx, nd.n))
}

// writeHandle is an open pending file.
type writeHandle struct {
	m *mount
	h *fs.WriteHandle
}

var (
	_ bazilfs.HandleWriter   = (*writeHandle)(nil)
	_ bazilfs.HandleReader   = (*writeHandle)(nil)
	_ bazilfs.HandleFlusher  = (*writeHandle)(nil)
	_ bazilfs.HandleReleaser = (*writeHandle)(nil)
	_ bazilfs.HandlePoller   = (*writeHandle)(nil)
)

// Write stores data at the request's offset.
func (w *writeHandle) Write(_ context.Context, req *fuse.WriteRequest, resp *fuse.WriteResponse) error {
	n, err := w.h.WriteAt(req.Data, req.Offset)
	resp.Size = n
	if err != nil {
		return w.m.t.Report(err)
	}
	return nil
}

// Read reads the content written so far.
func (w *writeHandle) Read(_ context.Context, req *fuse.ReadRequest, resp *fuse.ReadResponse) error {
	if req.Offset < 0 || req.Size < 0 {
		return syscall.EINVAL
	}
	buf := make([]byte, req.Size)
	n, err := w.h.ReadAt(buf, req.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return w.m.t.Report(err)
	}
	resp.Data = buf[:n]
	return nil
}

// Flush appends the content as one record (close(2) waits for it).
func (w *writeHandle) Flush(ctx context.Context, _ *fuse.FlushRequest) error {
	_, err := w.h.Flush(ctx)
	if err != nil {
		return w.m.t.Report(err)
	}
	return nil
}

// Release closes the handle; the last one of a pending file drops its name.
func (w *writeHandle) Release(context.Context, *fuse.ReleaseRequest) error {
	if err := w.h.Close(); err != nil {
		return w.m.t.Report(err)
	}
	return nil
}

// Poll answers ENOSYS, like fileHandle's.
func (w *writeHandle) Poll(context.Context, *fuse.PollRequest, *fuse.PollResponse) error {
	return syscall.ENOSYS
}
