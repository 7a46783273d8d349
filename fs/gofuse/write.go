package gofuse

import (
	"context"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

// Writing (--rw). Created files are pending records of the tree; their
// FLUSH (sent synchronously by close(2)) appends them, so the record is in
// the source file by the time close returns. Nodes that change (record
// directories, .recfs, pending files, mirrored directories) get zero
// attribute timeouts and no directory or page cache; pending files also a
// zero entry timeout, because their name disappears when they are
// released. Negative lookups are not cached at all in a writable mount
// (see fs.Policy), so a new record's name is found at once.

// timeouts sets the kernel cache timeouts of a looked-up entry.
func (m *mount) timeouts(n fs.Node, out *fuse.EntryOut) {
	h := m.p.Entry(n)
	out.SetEntryTimeout(ttl(h.Entry))
	out.SetAttrTimeout(ttl(h.Attr))
}

// Create makes a pending record in a record directory.
func (nd *node) Create(ctx context.Context, name string, _ uint32, _ uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	c, h, err := nd.m.t.Create(ctx, nd.n, name)
	if err != nil {
		return nil, nil, 0, nd.m.t.Report(err)
	}
	in, errno := nd.child(ctx, c, out)
	if errno != 0 {
		h.Close()
		return nil, nil, 0, errno
	}
	return in, &writeHandle{m: nd.m, h: h}, openFlags(nd.m.p.File(c, true)), 0
}

// Mkdir makes a new record file in a mirrored directory.
func (nd *node) Mkdir(ctx context.Context, name string, _ uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	c, err := nd.m.t.Mkdir(ctx, nd.n, name)
	if err != nil {
		return nil, nd.m.t.Report(err)
	}
	return nd.child(ctx, c, out)
}

// Unlink discards a pending file; everything else is refused.
func (nd *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return nd.m.t.Report(nd.m.t.Unlink(ctx, nd.n, name))
}

// Setattr changes the size of a pending file (O_TRUNC, ftruncate) and
// accepts mode, owner and time changes of it as no-ops (cp -p, touch);
// every other node is immutable.
func (nd *node) Setattr(ctx context.Context, _ fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if nd.n.Kind != fs.KindPending {
		return nd.readOnly("setattr")
	}
	if size, ok := in.GetSize(); ok {
		if err := nd.m.t.Truncate(ctx, nd.n, int64(size)); err != nil {
			return nd.m.t.Report(err)
		}
	}
	return nd.Getattr(ctx, nil, out)
}

// writeHandle is an open pending file.
type writeHandle struct {
	m *mount
	h *fs.WriteHandle
}

var (
	_ fusefs.FileWriter   = (*writeHandle)(nil)
	_ fusefs.FileFlusher  = (*writeHandle)(nil)
	_ fusefs.FileFsyncer  = (*writeHandle)(nil)
	_ fusefs.FileReleaser = (*writeHandle)(nil)
)

func (w *writeHandle) Write(_ context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, err := w.h.WriteAt(data, off)
	if err != nil {
		return uint32(n), w.m.t.Report(err)
	}
	return uint32(n), 0
}

// Flush appends the content as one record (close(2) waits for it).
func (w *writeHandle) Flush(ctx context.Context) syscall.Errno {
	_, err := w.h.Flush(ctx)
	return w.m.t.Report(err)
}

// Fsync appends the content now, durably.
func (w *writeHandle) Fsync(ctx context.Context, _ uint32) syscall.Errno {
	_, err := w.h.Fsync(ctx)
	return w.m.t.Report(err)
}

func (w *writeHandle) Release(context.Context) syscall.Errno {
	return w.m.t.Report(w.h.Close())
}
