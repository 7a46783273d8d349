package nfs

import (
	"context"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	billy "github.com/go-git/go-billy/v5"
	gonfs "github.com/willscott/go-nfs"
	nfsfile "github.com/willscott/go-nfs/file"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// Resolution of handles and paths to nodes, and the read-only
// billy.Filesystem the library serves GETATTR, LOOKUP and ACCESS through.

// resolve returns the node a handle names, its directory, and its path
// from the root (names), or errStale.
func (s *Server) resolve(ctx context.Context, h handle) (n, parent fs.Node, names []string, err error) {
	names, err = serve.Split(h.path)
	if err != nil {
		return n, parent, nil, errStale
	}
	var anchor fs.Node
	err = s.r.Do(ctx, names, func(a, p fs.Node) error {
		at, err := s.t.Getattr(ctx, a)
		if err != nil {
			return err
		}
		if at.Ino != h.ino {
			return errStale
		}
		anchor, parent = a, p
		return nil
	})
	if err != nil {
		if serve.NotFound(err) || fs.Errno(err) == syscall.ESTALE {
			err = errStale
		}
		return n, parent, nil, err
	}
	if !anchored(h.kind) {
		if anchor.Kind != h.kind {
			return n, parent, nil, errStale
		}
		return anchor, parent, names, nil
	}
	if anchor.Kind != fs.KindRecordDir || uint32(s.o.Stamps.Of(anchor).Epoch) != h.epoch {
		return n, parent, nil, errStale
	}
	var child string
	switch h.kind {
	case fs.KindRecord:
		child = itoa(h.n)
	case fs.KindInfo:
		child = fs.InfoName
	case fs.KindSummary:
		child = fs.SummaryName
	case fs.KindTrailerDir, fs.KindTrailer:
		child = fs.TrailerName
	}
	n, err = s.t.Lookup(ctx, anchor, child)
	parent = anchor
	names = append(names, child)
	if err == nil && h.kind == fs.KindTrailer {
		parent = n
		n, err = s.t.Lookup(ctx, n, itoa(h.n))
		names = append(names, itoa(h.n))
	}
	if err != nil {
		return n, parent, nil, errStale
	}
	return n, parent, names, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// toHandle returns the handle of the entry at names.
func (s *Server) toHandle(ctx context.Context, names []string) ([]byte, error) {
	var out []byte
	err := s.r.Do(ctx, names, func(n, parent fs.Node) error {
		anchorNames := names
		anchor := n
		switch {
		case n.Kind == fs.KindTrailer:
			anchorNames = names[:len(names)-2]
		case anchored(n.Kind):
			anchorNames, anchor = names[:len(names)-1], parent
		}
		if n.Kind == fs.KindTrailer {
			var err error
			if anchor, _, err = s.r.Walk(ctx, anchorNames); err != nil {
				return err
			}
		}
		a, err := s.t.Getattr(ctx, anchor)
		if err != nil {
			return err
		}
		h := handle{kind: n.Kind, ino: a.Ino, n: n.N, path: strings.Join(anchorNames, "/")}
		if anchored(n.Kind) {
			h.epoch = uint32(s.o.Stamps.Of(anchor).Epoch)
		} else {
			h.n = 0
		}
		out = s.paths.encode(h)
		return nil
	})
	return out, err
}

// attr returns the attributes of n (in parent) as a FileInfo.
func (s *Server) attr(ctx context.Context, n, parent fs.Node, name string) (*fileInfo, error) {
	a, _, err := s.o.Stamps.Attr(ctx, s.t, n, parent)
	if err != nil {
		return nil, err
	}
	return &fileInfo{name: name, a: a}, nil
}

// nfsAttr returns the NFS attributes of n, as the library writes them.
func (s *Server) nfsAttr(ctx context.Context, n, parent fs.Node, name string) (*gonfs.FileAttribute, error) {
	fi, err := s.attr(ctx, n, parent, name)
	if err != nil {
		return nil, err
	}
	return gonfs.ToFileAttribute(fi, name), nil
}

// fileInfo is an entry's attributes as an os.FileInfo for the library.
// Mode returns the permission bits alone: the library sends Mode() as the
// NFS mode, and IsDir tells it the type.
type fileInfo struct {
	name string
	a    fs.Attr
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.a.Size }
func (fi *fileInfo) Mode() os.FileMode  { return os.FileMode(fi.a.Mode & 0o7777) }
func (fi *fileInfo) ModTime() time.Time { return fi.a.Mtime }
func (fi *fileInfo) IsDir() bool        { return fi.a.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (fi *fileInfo) Sys() any {
	return &nfsfile.FileInfo{Nlink: fi.a.Nlink, UID: fi.a.UID, GID: fi.a.GID, Fileid: fi.a.Ino}
}

// billyFS is the tree as the read-only billy.Filesystem the library
// serves: paths are slash-separated names from the root.
type billyFS struct{ s *Server }

var (
	_ billy.Filesystem = (*billyFS)(nil)
	_ billy.Capable    = (*billyFS)(nil)
)

// Capabilities says the file system reads and seeks, and never writes:
// the library then refuses every change with NFS3ERR_ROFS.
func (b *billyFS) Capabilities() billy.Capability {
	return billy.ReadCapability | billy.SeekCapability
}

func (b *billyFS) stat(p string) (os.FileInfo, error) {
	names, err := serve.Split(p)
	if err != nil {
		return nil, os.ErrNotExist
	}
	ctx := context.Background()
	var fi *fileInfo
	err = b.s.r.Do(ctx, names, func(n, parent fs.Node) error {
		var err error
		fi, err = b.s.attr(ctx, n, parent, path.Base("/"+p))
		return err
	})
	if err != nil {
		b.s.t.Report(err)
		if serve.NotFound(err) {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	return fi, nil
}

// Stat returns the attributes of the entry at p.
func (b *billyFS) Stat(p string) (os.FileInfo, error) { return b.stat(p) }

// Lstat returns the attributes of the entry at p (the tree has no links).
func (b *billyFS) Lstat(p string) (os.FileInfo, error) { return b.stat(p) }

// Join joins names with slashes.
func (b *billyFS) Join(elem ...string) string { return strings.Join(elem, "/") }

// Root returns the root's path.
func (b *billyFS) Root() string { return "/" }

var errROFS = &gonfs.NFSStatusError{NFSStatus: gonfs.NFSStatusROFS, WrappedErr: os.ErrPermission}

func (b *billyFS) Create(string) (billy.File, error) { return nil, errROFS }
func (b *billyFS) Open(string) (billy.File, error)   { return nil, os.ErrPermission }
func (b *billyFS) OpenFile(string, int, os.FileMode) (billy.File, error) {
	return nil, os.ErrPermission
}
func (b *billyFS) Rename(string, string) error                 { return errROFS }
func (b *billyFS) Remove(string) error                         { return errROFS }
func (b *billyFS) TempFile(string, string) (billy.File, error) { return nil, errROFS }
func (b *billyFS) ReadDir(string) ([]os.FileInfo, error)       { return nil, os.ErrPermission }
func (b *billyFS) MkdirAll(string, os.FileMode) error          { return errROFS }
func (b *billyFS) Symlink(string, string) error                { return errROFS }
func (b *billyFS) Readlink(string) (string, error)             { return "", os.ErrInvalid }
func (b *billyFS) Chroot(string) (billy.Filesystem, error)     { return nil, os.ErrPermission }

// The library's Handler: mounts, handles and file system statistics.

// Mount accepts the export "/" (and the empty path) with AUTH_NULL and
// AUTH_UNIX. The front answers MNT itself (see mnt); this serves a caller
// of the library's own handler.
func (s *Server) Mount(_ context.Context, _ net.Conn, req gonfs.MountRequest) (gonfs.MountStatus, billy.Filesystem, []gonfs.AuthFlavor) {
	if p := string(req.Dirpath); p != "/" && p != "" {
		return gonfs.MountStatusErrNoEnt, nil, nil
	}
	return gonfs.MountStatusOk, s.fsys, []gonfs.AuthFlavor{gonfs.AuthFlavorNull, gonfs.AuthFlavorUnix}
}

// Change returns nil: nothing changes the tree.
func (s *Server) Change(billy.Filesystem) billy.Change { return nil }

// FSStat leaves the library's answer for a file system that cannot be
// written (no space or files available).
func (s *Server) FSStat(context.Context, billy.Filesystem, *gonfs.FSStat) error { return nil }

// ToHandle returns the handle of the entry at names; an entry that cannot
// be resolved gets a handle that is stale.
func (s *Server) ToHandle(_ billy.Filesystem, names []string) []byte {
	h, err := s.toHandle(context.Background(), names)
	if err != nil {
		return []byte{0}
	}
	return h
}

// FromHandle returns the path of the entry a handle names.
func (s *Server) FromHandle(fh []byte) (billy.Filesystem, []string, error) {
	h, err := s.paths.decode(fh)
	if err != nil {
		return nil, nil, err
	}
	_, _, names, err := s.resolve(context.Background(), h)
	if err != nil {
		return nil, nil, err
	}
	return s.fsys, names, nil
}

// InvalidateHandle does nothing: handles are not kept.
func (s *Server) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit is what the library bounds its own listings by; they are
// not used (see readdir.go).
func (s *Server) HandleLimit() int { return 1 << 20 }

var _ gonfs.Handler = (*Server)(nil)
