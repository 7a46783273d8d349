package gofuse

import (
	"context"
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

// Record directories are listed here, so that their listings hand out
// record entries without bridge nodes. A record is no directory: the
// kernel never has a listing of one (OPENDIR fails with ENOTDIR), and a
// request that names one anyway gets ENOTDIR too, never the bridge.

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
	return r.list(cancel, in, out, false)
}

func (r *recordFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.list(cancel, in, out, true)
}

// list answers READDIR, or READDIRPLUS with plus: a record directory's
// listing here, a record ENOTDIR, anything else the bridge.
func (r *recordFS) list(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	switch l := r.listing(in.NodeId, in.Fh); {
	case l != nil:
		return r.readDir(ctxOf(&in.InHeader, cancel), l, in.Offset, out, plus)
	case r.notDir(in.NodeId):
		return fuse.ENOTDIR
	case plus:
		return r.RawFileSystem.ReadDirPlus(cancel, in, out)
	}
	return r.RawFileSystem.ReadDir(cancel, in, out)
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
		if !r.notDir(in.NodeId) {
			r.RawFileSystem.ReleaseDir(in)
		}
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
	if r.notDir(in.NodeId) {
		return fuse.ENOTDIR
	}
	return r.RawFileSystem.FsyncDir(cancel, in)
}
