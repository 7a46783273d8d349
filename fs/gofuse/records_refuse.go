package gofuse

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

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
	if _, c, ok := r.record(in.NodeId); ok {
		// Nothing to write, but in a writable mount the record's source
		// may hold appends not yet synced.
		return fuse.Status(r.m.t.Report(r.m.t.Fsync(ctxOf(&in.InHeader, cancel), c)))
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
