//go:build linux

package bazil

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"bazil.org/fuse"
	bazilfs "bazil.org/fuse/fs"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
)

// TestSuite runs the node suite every adapter runs, through the bazil
// nodes without a kernel.
func TestSuite(t *testing.T) {
	fusetest.Run(t, fusetest.Caps{}, func(t testing.TB, tree *fs.Tree, o fs.MountOptions) fusetest.Driver {
		return &driver{fsys: newFS(tree, o)}
	})
}

// driver drives the bazil nodes as the kernel would (through bazil's
// server). Nodes are the node values.
type driver struct{ fsys *fileSystem }

var bg = context.Background()

// errOf returns the errno a caller sees for err: ENOSYS (an operation
// turned off) reaches callers as ENOTSUP.
func errOf(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fuse.ErrNoXattr) {
		return syscall.ENODATA
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		if en == syscall.ENOSYS {
			return syscall.ENOTSUP
		}
		return en
	}
	return syscall.EIO
}

// statMode turns bazil's os.FileMode back into stat mode bits.
func statMode(m os.FileMode) uint32 {
	s := uint32(m.Perm())
	switch {
	case m.IsDir():
		s |= syscall.S_IFDIR
	case m&os.ModeSymlink != 0:
		s |= syscall.S_IFLNK
	default:
		s |= syscall.S_IFREG
	}
	return s
}

func nodeAttr(nd node) (fusetest.Attr, error) {
	var a fuse.Attr
	if err := nd.Attr(bg, &a); err != nil {
		return fusetest.Attr{}, errOf(err)
	}
	return fusetest.Attr{Ino: a.Inode, Mode: statMode(a.Mode), Size: a.Size, Nlink: a.Nlink, TTL: a.Valid}, nil
}

func hintsOf(fl fuse.OpenResponseFlags) fs.OpenHints {
	return fs.OpenHints{
		KeepCache: fl&fuse.OpenKeepCache != 0,
		DirectIO:  fl&fuse.OpenDirectIO != 0,
		NoFlush:   fl&openNoFlush != 0,
		CacheDir:  fl&fuse.OpenCacheDir != 0,
	}
}

func (d *driver) Root() fusetest.Node { return d.fsys.root }

func (d *driver) Lookup(parent fusetest.Node, name string) (fusetest.Entry, error) {
	resp := &fuse.LookupResponse{}
	c, err := parent.(node).Lookup(bg, &fuse.LookupRequest{Name: name}, resp)
	if err != nil {
		return fusetest.Entry{}, errOf(err)
	}
	// bazil answers a LOOKUP with the node's attributes.
	a, err := nodeAttr(c.(node))
	if err != nil {
		return fusetest.Entry{}, err
	}
	return fusetest.Entry{Node: c, Attr: a, EntryTTL: resp.EntryValid}, nil
}

func (d *driver) Getattr(n fusetest.Node) (fusetest.Attr, error) { return nodeAttr(n.(node)) }

func (d *driver) Open(n fusetest.Node, flags int) (fusetest.File, fs.OpenHints, error) {
	resp := &fuse.OpenResponse{}
	h, err := n.(node).Open(bg, &fuse.OpenRequest{Flags: fuse.OpenFlags(flags)}, resp)
	if err != nil {
		return nil, fs.OpenHints{}, errOf(err)
	}
	return &file{h: h}, hintsOf(resp.Flags), nil
}

func (d *driver) Create(parent fusetest.Node, name string, flags int) (fusetest.Entry, fusetest.File, fs.OpenHints, error) {
	resp := &fuse.CreateResponse{}
	resp.EntryValid = 1 << 40 // bazil's default is non-zero: Create must set it
	c, h, err := parent.(node).Create(bg, &fuse.CreateRequest{Name: name, Flags: fuse.OpenFlags(flags), Mode: 0o644}, resp)
	if err != nil {
		return fusetest.Entry{}, nil, fs.OpenHints{}, errOf(err)
	}
	a, err := nodeAttr(c.(node))
	if err != nil {
		return fusetest.Entry{}, nil, fs.OpenHints{}, err
	}
	return fusetest.Entry{Node: c, Attr: a, EntryTTL: resp.EntryValid}, &file{h: h}, hintsOf(resp.Flags), nil
}

func (d *driver) ReadDir(n fusetest.Node) ([]fusetest.DirEntry, fs.OpenHints, error) {
	resp := &fuse.OpenResponse{}
	h, err := n.(node).Open(bg, &fuse.OpenRequest{Dir: true, Flags: fuse.OpenReadOnly | fuse.OpenDirectory}, resp)
	if err != nil {
		return nil, fs.OpenHints{}, errOf(err)
	}
	defer h.(bazilfs.HandleReleaser).Release(bg, &fuse.ReleaseRequest{})
	ents, err := h.(bazilfs.HandleReadDirAller).ReadDirAll(bg)
	if err != nil {
		return nil, fs.OpenHints{}, errOf(err)
	}
	out := make([]fusetest.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = fusetest.DirEntry{Name: e.Name, Ino: e.Inode, Dir: e.Type == fuse.DT_Dir}
	}
	return out, hintsOf(resp.Flags), nil
}

func (d *driver) Getxattr(n fusetest.Node, name string) ([]byte, error) {
	resp := &fuse.GetxattrResponse{}
	if err := n.(node).Getxattr(bg, &fuse.GetxattrRequest{Name: name, Size: 1 << 16}, resp); err != nil {
		return nil, errOf(err)
	}
	return resp.Xattr, nil
}

func (d *driver) Listxattr(n fusetest.Node) ([]string, error) {
	resp := &fuse.ListxattrResponse{}
	if err := n.(node).Listxattr(bg, &fuse.ListxattrRequest{Size: 1 << 16}, resp); err != nil {
		return nil, errOf(err)
	}
	var names []string
	for _, s := range strings.Split(string(resp.Xattr), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	return names, nil
}

func (d *driver) Setmode(n fusetest.Node, mode uint32) (fusetest.Attr, error) {
	resp := &fuse.SetattrResponse{}
	if err := n.(node).Setattr(bg, &fuse.SetattrRequest{Valid: fuse.SetattrMode, Mode: os.FileMode(mode)}, resp); err != nil {
		return fusetest.Attr{}, errOf(err)
	}
	a := resp.Attr
	return fusetest.Attr{Ino: a.Inode, Mode: statMode(a.Mode), Size: a.Size, Nlink: a.Nlink, TTL: a.Valid}, nil
}

func (d *driver) Change(op fusetest.Op, parent fusetest.Node, name string, target fusetest.Node) error {
	var err error
	switch op {
	case fusetest.OpMkdir:
		_, err = parent.(node).Mkdir(bg, &fuse.MkdirRequest{Name: name, Mode: os.ModeDir | 0o755})
	case fusetest.OpMknod:
		_, err = parent.(node).Mknod(bg, &fuse.MknodRequest{Name: name, Mode: 0o644})
	case fusetest.OpUnlink:
		err = parent.(node).Remove(bg, &fuse.RemoveRequest{Name: name})
	case fusetest.OpRmdir:
		err = parent.(node).Remove(bg, &fuse.RemoveRequest{Name: name, Dir: true})
	case fusetest.OpRename:
		err = parent.(node).Rename(bg, &fuse.RenameRequest{OldName: name, NewName: name + ".new"}, parent.(node))
	case fusetest.OpSymlink:
		_, err = parent.(node).Symlink(bg, &fuse.SymlinkRequest{NewName: name, Target: "x"})
	case fusetest.OpLink:
		_, err = parent.(node).Link(bg, &fuse.LinkRequest{NewName: name}, target.(node))
	case fusetest.OpSetxattr:
		err = target.(node).Setxattr(bg, &fuse.SetxattrRequest{Name: name, Xattr: []byte("v")})
	case fusetest.OpRemovexattr:
		err = target.(node).Removexattr(bg, &fuse.RemovexattrRequest{Name: name})
	case fusetest.OpTruncate:
		err = target.(node).Setattr(bg, &fuse.SetattrRequest{Valid: fuse.SetattrSize}, &fuse.SetattrResponse{})
	default:
		err = syscall.ENOSYS
	}
	return errOf(err)
}

func (d *driver) Statfs() (fs.StatfsInfo, error) {
	resp := &fuse.StatfsResponse{}
	if err := d.fsys.Statfs(bg, &fuse.StatfsRequest{}, resp); err != nil {
		return fs.StatfsInfo{}, errOf(err)
	}
	return fs.StatfsInfo{Bsize: resp.Bsize, Frsize: resp.Frsize, NameLen: resp.Namelen}, nil
}

// file is an open handle. bazil answers FLUSH itself for handles without
// Flush.
type file struct{ h bazilfs.Handle }

func (f *file) Read(off int64, size int) ([]byte, error) {
	r, ok := f.h.(bazilfs.HandleReader)
	if !ok {
		return nil, syscall.EBADF
	}
	resp := &fuse.ReadResponse{Data: make([]byte, 0, size)}
	if err := r.Read(bg, &fuse.ReadRequest{Offset: off, Size: size}, resp); err != nil {
		return nil, errOf(err)
	}
	return resp.Data, nil
}

func (f *file) Write(p []byte, off int64) (int, error) {
	w, ok := f.h.(bazilfs.HandleWriter)
	if !ok {
		return 0, syscall.EBADF
	}
	resp := &fuse.WriteResponse{}
	err := w.Write(bg, &fuse.WriteRequest{Data: p, Offset: off}, resp)
	return resp.Size, errOf(err)
}

func (f *file) Flush() error {
	if fl, ok := f.h.(bazilfs.HandleFlusher); ok {
		return errOf(fl.Flush(bg, &fuse.FlushRequest{}))
	}
	return nil
}

func (f *file) Release() error {
	if r, ok := f.h.(bazilfs.HandleReleaser); ok {
		return errOf(r.Release(bg, &fuse.ReleaseRequest{}))
	}
	return nil
}

// mountOptions returns the bazil mount options Mount uses for tree and o.
func mountOptions(tree *fs.Tree, o fs.MountOptions) []fuse.MountOption {
	return options(fs.NewPolicy(tree, o).Mount())
}
