package nfs

import (
	"context"
	"errors"
	"io"
	"syscall"

	gonfs "github.com/willscott/go-nfs"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// RPC accept_stat values.
const (
	rpcSuccess     = 0
	rpcGarbageArgs = 4
)

// NFS status codes (nfsstat3) the front answers with.
const (
	nfsOK          = 0
	nfsErrNoEnt    = 2
	nfsErrIO       = 5
	nfsErrAcces    = 13
	nfsErrNotDir   = 20
	nfsErrIsDir    = 21
	nfsErrInval    = 22
	nfsErrStale    = 70
	nfsErrBadCook  = 10003
	nfsErrTooSmall = 10005
)

// answer answers the call c if it is one the front serves, and reports
// whether it did.
func (f *front) answer(ctx context.Context, c call) bool {
	var body []byte
	var err error
	switch {
	case c.prog == progMount && c.proc == mountMnt:
		body, err = f.s.mnt(ctx, c.args)
	case c.prog == progMount && c.proc == mountExport:
		body = exportList()
	case c.prog == progMount && c.proc == mountDump:
		body = []byte{0, 0, 0, 0} // no mounts listed
	case c.prog == progMount && c.proc == mountUmntAll:
		body = nil
	case c.prog == progNFS && c.vers == 3 && c.proc == nfsRead:
		body, err = f.s.read(ctx, c.args)
	case c.prog == progNFS && c.vers == 3 && (c.proc == nfsReadDir || c.proc == nfsReadDirPlus):
		body, err = f.s.readDir(ctx, c.args, c.proc == nfsReadDirPlus)
	case c.prog == progNFS && c.vers == 3 && c.proc == nfsFSInfo:
		body, err = f.s.fsInfo(ctx, c.args)
	default:
		return false
	}
	if err != nil {
		f.reply(c, rpcGarbageArgs, nil)
		f.log(c, "garbage arguments")
		return true
	}
	f.reply(c, rpcSuccess, body)
	f.log(c, "ok")
	return true
}

// exportList is the body of the EXPORT reply: one export, "/", open to
// every client (no groups).
func exportList() []byte {
	var w xdrWriter
	w.bool(true) // an export follows
	w.opaque([]byte("/"))
	w.bool(false) // no groups
	w.bool(false) // no more exports
	return w.b
}

// Mount status codes (mountstat3).
const (
	mntOK      = 0
	mntNoEnt   = 2
	mntNotDir  = 20
	mntTooLong = 63
)

// mnt answers MNT: the handle of the directory at the path asked for
// ("/" or "" for the root, or a directory below it). The library refuses
// an empty path, which libnfs sends for a file in the root.
func (s *Server) mnt(ctx context.Context, args []byte) ([]byte, error) {
	r := xdrReader{b: args}
	dirpath := r.opaque(1024)
	if r.err != nil {
		if len(args) >= 4 {
			return []byte{0, 0, 0, mntTooLong}, nil
		}
		return nil, r.err
	}
	var w xdrWriter
	names, err := serve.Split(string(dirpath))
	var fh []byte
	if err == nil {
		err = s.r.Do(ctx, names, func(n, _ fs.Node) error {
			if !n.IsDir() {
				return syscall.ENOTDIR
			}
			return nil
		})
	}
	if err == nil {
		fh, err = s.toHandle(ctx, names)
	}
	switch {
	case err == nil:
		w.u32(mntOK)
		w.opaque(fh)
		w.u32(2)
		w.u32(0) // AUTH_NULL
		w.u32(1) // AUTH_UNIX
	case fs.Errno(err) == syscall.ENOTDIR:
		w.u32(mntNotDir)
	default:
		s.t.Report(err)
		w.u32(mntNoEnt)
	}
	return w.b, nil
}

// status maps an error of the tree to an nfsstat3, logging failures once.
func (s *Server) status(err error) uint32 {
	if errors.Is(err, errStale) {
		return nfsErrStale
	}
	switch s.t.Report(err) {
	case syscall.ENOENT:
		return nfsErrNoEnt
	case syscall.ENOTDIR:
		return nfsErrNotDir
	case syscall.EISDIR:
		return nfsErrIsDir
	case syscall.EACCES, syscall.EPERM:
		return nfsErrAcces
	case syscall.EINVAL:
		return nfsErrInval
	case syscall.ESTALE:
		return nfsErrStale
	}
	return nfsErrIO
}

// failure is the body of a failed call whose result carries a post_op_attr
// (READ, READDIR, FSINFO...): the status and no attributes.
func failure(status uint32) []byte {
	var w xdrWriter
	w.u32(status)
	w.bool(false)
	return w.b
}

// node resolves a file handle argument.
func (s *Server) node(ctx context.Context, r *xdrReader) (n, parent fs.Node, names []string, err error) {
	fh := r.opaque(maxHandle)
	if r.err != nil {
		return n, parent, nil, r.err
	}
	h, err := s.paths.decode(fh)
	if err != nil {
		return n, parent, nil, err
	}
	return s.resolve(ctx, h)
}

// postOpAttr writes the post_op_attr of n.
func (s *Server) postOpAttr(ctx context.Context, w *xdrWriter, n, parent fs.Node, name string) {
	a, err := s.nfsAttr(ctx, n, parent, name)
	if err != nil {
		w.bool(false)
		return
	}
	_ = gonfs.WritePostOpAttrs(w, a)
}

// read answers READ: at most maxRead bytes, within the read budget.
func (s *Server) read(ctx context.Context, args []byte) ([]byte, error) {
	r := xdrReader{b: args}
	n, parent, names, err := s.node(ctx, &r)
	off, count := r.u64(), r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if err != nil {
		return failure(s.status(err)), nil
	}
	if n.IsDir() {
		return failure(nfsErrIsDir), nil
	}
	name := names[len(names)-1]
	fi, err := s.attr(ctx, n, parent, name)
	if err != nil {
		return failure(s.status(err)), nil
	}
	size := fi.Size()
	count = min(count, maxRead)
	if int64(off) >= size {
		count = 0
	} else {
		count = uint32(min(int64(count), size-int64(off)))
	}
	select {
	case s.budget <- struct{}{}:
	case <-ctx.Done():
		return failure(nfsErrIO), nil
	}
	defer func() { <-s.budget }()
	buf := make([]byte, count)
	k := 0
	if count > 0 {
		h, err := s.t.Open(ctx, n)
		if err != nil {
			return failure(s.status(err)), nil
		}
		k, err = h.ReadAt(buf, int64(off))
		h.Close()
		if err != nil && err != io.EOF {
			return failure(s.status(err)), nil
		}
	}
	var w xdrWriter
	w.u32(nfsOK)
	_ = gonfs.WritePostOpAttrs(&w, gonfs.ToFileAttribute(fi, name))
	w.u32(uint32(k))
	w.bool(int64(off)+int64(k) >= size)
	w.opaque(buf[:k])
	return w.b, nil
}

// fsInfo answers FSINFO with this server's transfer sizes.
func (s *Server) fsInfo(ctx context.Context, args []byte) ([]byte, error) {
	r := xdrReader{b: args}
	n, parent, names, err := s.node(ctx, &r)
	if r.err != nil {
		return nil, r.err
	}
	if err != nil {
		return failure(s.status(err)), nil
	}
	var w xdrWriter
	w.u32(nfsOK)
	s.postOpAttr(ctx, &w, n, parent, last(names))
	w.u32(maxRead)   // rtmax
	w.u32(maxRead)   // rtpref
	w.u32(4096)      // rtmult
	w.u32(64 << 10)  // wtmax: nothing is written
	w.u32(64 << 10)  // wtpref
	w.u32(4096)      // wtmult
	w.u32(64 << 10)  // dtpref
	w.u64(1<<63 - 1) // maxfilesize
	w.u32(0)         // time_delta: seconds
	w.u32(1)         // and nanoseconds
	w.u32(0x0008)    // FSF3_HOMOGENEOUS
	return w.b, nil
}

// last returns the last name, or "" for the root.
func last(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}
