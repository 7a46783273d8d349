package gofuse

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
)

// TestSuite runs the node suite every adapter runs, through the go-fuse
// bridge without a kernel.
func TestSuite(t *testing.T) {
	fusetest.Run(t, fusetest.Caps{NoOpen: true, NegativeEntries: true}, func(t testing.TB, tree *fs.Tree, o fs.MountOptions) fusetest.Driver {
		return &driver{raw: rawFS(newRoot(tree, o), mountOptions(tree, o)), noOpen: fs.NoOpen(o)}
	})
}

// driver drives the go-fuse bridge as the kernel would. Nodes are node
// IDs; a failed lookup cached as a negative entry is ENOENT.
type driver struct {
	raw    fuse.RawFileSystem
	noOpen bool
}

func hdr(n fusetest.Node) *fuse.InHeader { return &fuse.InHeader{NodeId: n.(uint64)} }

func errOf(st fuse.Status) error {
	if st == fuse.OK {
		return nil
	}
	return syscall.Errno(st)
}

func attrOf(a *fuse.Attr, ttl time.Duration) fusetest.Attr {
	return fusetest.Attr{Ino: a.Ino, Mode: a.Mode, Size: a.Size, Nlink: a.Nlink, TTL: ttl}
}

func hintsOf(fl uint32) fs.OpenHints {
	return fs.OpenHints{
		KeepCache: fl&fuse.FOPEN_KEEP_CACHE != 0,
		DirectIO:  fl&fuse.FOPEN_DIRECT_IO != 0,
		NoFlush:   fl&fuse.FOPEN_NOFLUSH != 0,
		CacheDir:  fl&fuse.FOPEN_CACHE_DIR != 0,
	}
}

func (d *driver) Root() fusetest.Node { return uint64(1) }

func (d *driver) Lookup(parent fusetest.Node, name string) (fusetest.Entry, error) {
	var out fuse.EntryOut
	st := d.raw.Lookup(nil, hdr(parent), name, &out)
	if st == fuse.OK && out.NodeId == 0 {
		return fusetest.Entry{EntryTTL: out.EntryTimeout()}, syscall.ENOENT
	}
	if st != fuse.OK {
		return fusetest.Entry{}, errOf(st)
	}
	return fusetest.Entry{Node: out.NodeId, Attr: attrOf(&out.Attr, out.AttrTimeout()), EntryTTL: out.EntryTimeout()}, nil
}

func (d *driver) Getattr(n fusetest.Node) (fusetest.Attr, error) {
	var out fuse.AttrOut
	if st := d.raw.GetAttr(nil, &fuse.GetAttrIn{InHeader: *hdr(n)}, &out); st != fuse.OK {
		return fusetest.Attr{}, errOf(st)
	}
	return attrOf(&out.Attr, out.Timeout()), nil
}

func (d *driver) Open(n fusetest.Node, flags int) (fusetest.File, fs.OpenHints, error) {
	var out fuse.OpenOut
	st := d.raw.Open(nil, &fuse.OpenIn{InHeader: *hdr(n), Flags: uint32(flags)}, &out)
	if st == fuse.ENOSYS && d.noOpen {
		// The kernel now opens without asking, keeps the cache and
		// sends no FLUSH; reads come without a handle.
		return &file{d: d, n: n.(uint64)}, fs.OpenHints{KeepCache: true, NoFlush: true}, nil
	}
	if st != fuse.OK {
		return nil, fs.OpenHints{}, errOf(st)
	}
	return &file{d: d, n: n.(uint64), fh: out.Fh}, hintsOf(out.OpenFlags), nil
}

func (d *driver) Create(parent fusetest.Node, name string, flags int) (fusetest.Entry, fusetest.File, fs.OpenHints, error) {
	var out fuse.CreateOut
	if st := d.raw.Create(nil, &fuse.CreateIn{InHeader: *hdr(parent), Flags: uint32(flags), Mode: 0o644}, name, &out); st != fuse.OK {
		return fusetest.Entry{}, nil, fs.OpenHints{}, errOf(st)
	}
	e := fusetest.Entry{Node: out.NodeId, Attr: attrOf(&out.Attr, out.AttrTimeout()), EntryTTL: out.EntryTimeout()}
	return e, &file{d: d, n: out.NodeId, fh: out.Fh}, hintsOf(out.OpenFlags), nil
}

func (d *driver) ReadDir(n fusetest.Node) ([]fusetest.DirEntry, fs.OpenHints, error) {
	var oo fuse.OpenOut
	in := *hdr(n)
	if st := d.raw.OpenDir(nil, &fuse.OpenIn{InHeader: in}, &oo); st != fuse.OK {
		return nil, fs.OpenHints{}, errOf(st)
	}
	defer d.raw.ReleaseDir(&fuse.ReleaseIn{InHeader: in, Fh: oo.Fh})
	var out []fusetest.DirEntry
	for off := uint64(0); ; {
		l := fuse.NewDirEntryList(make([]byte, 4096), off)
		if st := d.raw.ReadDir(nil, &fuse.ReadIn{InHeader: in, Fh: oo.Fh, Offset: off, Size: 4096}, l); st != fuse.OK {
			return nil, fs.OpenHints{}, errOf(st)
		}
		ents, err := fuse.ParseDirEntries(l.Bytes())
		if err != nil {
			return nil, fs.OpenHints{}, err
		}
		if len(ents) == 0 {
			return out, hintsOf(oo.OpenFlags), nil
		}
		for _, e := range ents {
			out = append(out, fusetest.DirEntry{Name: e.Name, Ino: e.Ino, Dir: e.Mode&syscall.S_IFMT == syscall.S_IFDIR})
			off = e.Off
		}
	}
}

func (d *driver) Getxattr(n fusetest.Node, name string) ([]byte, error) {
	buf := make([]byte, 1<<16)
	sz, st := d.raw.GetXAttr(nil, hdr(n), name, buf)
	if st != fuse.OK {
		return nil, errOf(st)
	}
	return buf[:sz], nil
}

func (d *driver) Listxattr(n fusetest.Node) ([]string, error) {
	buf := make([]byte, 1<<16)
	sz, st := d.raw.ListXAttr(nil, hdr(n), buf)
	if st != fuse.OK {
		return nil, errOf(st)
	}
	var names []string
	for _, b := range bytes.Split(buf[:sz], []byte{0}) {
		if len(b) > 0 {
			names = append(names, string(b))
		}
	}
	return names, nil
}

func (d *driver) Setmode(n fusetest.Node, mode uint32) (fusetest.Attr, error) {
	var out fuse.AttrOut
	in := &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: *hdr(n), Valid: fuse.FATTR_MODE, Mode: mode}}
	if st := d.raw.SetAttr(nil, in, &out); st != fuse.OK {
		return fusetest.Attr{}, errOf(st)
	}
	return attrOf(&out.Attr, out.Timeout()), nil
}

func (d *driver) Change(op fusetest.Op, parent fusetest.Node, name string, target fusetest.Node) error {
	var out fuse.EntryOut
	switch op {
	case fusetest.OpMkdir:
		return errOf(d.raw.Mkdir(nil, &fuse.MkdirIn{InHeader: *hdr(parent), Mode: 0o755}, name, &out))
	case fusetest.OpMknod:
		return errOf(d.raw.Mknod(nil, &fuse.MknodIn{InHeader: *hdr(parent), Mode: syscall.S_IFREG | 0o644}, name, &out))
	case fusetest.OpUnlink:
		return errOf(d.raw.Unlink(nil, hdr(parent), name))
	case fusetest.OpRmdir:
		return errOf(d.raw.Rmdir(nil, hdr(parent), name))
	case fusetest.OpRename:
		return errOf(d.raw.Rename(nil, &fuse.RenameIn{InHeader: *hdr(parent), Newdir: parent.(uint64)}, name, name+".new"))
	case fusetest.OpSymlink:
		return errOf(d.raw.Symlink(nil, hdr(parent), "x", name, &out))
	case fusetest.OpLink:
		return errOf(d.raw.Link(nil, &fuse.LinkIn{InHeader: *hdr(parent), Oldnodeid: target.(uint64)}, name, &out))
	case fusetest.OpSetxattr:
		return errOf(d.raw.SetXAttr(nil, &fuse.SetXAttrIn{InHeader: *hdr(target), Size: 1}, name, []byte("v")))
	case fusetest.OpRemovexattr:
		return errOf(d.raw.RemoveXAttr(nil, hdr(target), name))
	case fusetest.OpTruncate:
		var aout fuse.AttrOut
		in := &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: *hdr(target), Valid: fuse.FATTR_SIZE}}
		return errOf(d.raw.SetAttr(nil, in, &aout))
	}
	return syscall.ENOSYS
}

func (d *driver) Statfs() (fs.StatfsInfo, error) {
	var out fuse.StatfsOut
	if st := d.raw.StatFs(nil, hdr(uint64(1)), &out); st != fuse.OK {
		return fs.StatfsInfo{}, errOf(st)
	}
	return fs.StatfsInfo{Bsize: out.Bsize, Frsize: out.Frsize, NameLen: out.NameLen}, nil
}

// file is an open file of the bridge (fh 0: opened without a handle).
type file struct {
	d  *driver
	n  uint64
	fh uint64
}

func (f *file) Read(off int64, size int) ([]byte, error) {
	buf := make([]byte, size)
	res, st := f.d.raw.Read(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: f.n}, Fh: f.fh, Offset: uint64(off), Size: uint32(size)}, buf)
	if st != fuse.OK {
		return nil, errOf(st)
	}
	b, st := res.Bytes(buf)
	return b, errOf(st)
}

func (f *file) Write(p []byte, off int64) (int, error) {
	n, st := f.d.raw.Write(nil, &fuse.WriteIn{InHeader: fuse.InHeader{NodeId: f.n}, Fh: f.fh, Offset: uint64(off), Size: uint32(len(p))}, p)
	return int(n), errOf(st)
}

func (f *file) Flush() error {
	if f.fh == 0 && f.d.noOpen {
		return nil // the kernel sends no FLUSH in no-open mode
	}
	return errOf(f.d.raw.Flush(nil, &fuse.FlushIn{InHeader: fuse.InHeader{NodeId: f.n}, Fh: f.fh}))
}

func (f *file) Release() error {
	if f.fh != 0 {
		f.d.raw.Release(nil, &fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: f.n}, Fh: f.fh})
	}
	return nil
}

// mountOptions returns the go-fuse options Mount uses for tree and o.
func mountOptions(tree *fs.Tree, o fs.MountOptions) *fusefs.Options {
	return options(fs.NewPolicy(tree, o))
}
