package fs

import (
	"context"
	iofs "io/fs"
	"path"
	"sort"
	"syscall"

	"github.com/recfs/recfs/codec/decode"
)

// Dir is an open directory: a stream of entries generated on the fly. For a
// record directory no list is ever built, whatever the number of records.
// A Dir is not safe for concurrent use.
type Dir struct {
	t     *Tree
	n     Node
	count int64      // records (record directories)
	extra []DirEntry // entries after the records, or every entry of a mirrored directory
	dots  []DirEntry // "." and "..", first, when WithDots asked for them
	pos   uint64     // entries already returned
	width int
	buf   []byte
}

// WithDots makes the listing start with "." and ".." as a kernel-facing
// directory's does (io/fs listings have none). ".." of the mount's root is
// the root itself. It must be called before the first Next.
func (d *Dir) WithDots(ctx context.Context) *Dir {
	self, parent := d.t.dirInos(ctx, d.n)
	d.dots = []DirEntry{{Name: ".", Mode: syscall.S_IFDIR, Ino: self}, {Name: "..", Mode: syscall.S_IFDIR, Ino: parent}}
	return d
}

// dirInos returns the inode numbers of the directory n and of its parent.
func (t *Tree) dirInos(ctx context.Context, n Node) (self, parent uint64) {
	a, _ := t.Getattr(ctx, n)
	self, parent = a.Ino, a.Ino
	switch {
	case n.Kind == KindTrailerDir:
		parent = makeIno(n.rd.key, inoKindRecDir, 0)
	case n.Kind == KindDir && n.rel == "", n.Kind == KindRecordDir && n.rd.rel == "":
		// the root
	case n.Kind == KindDir, n.Kind == KindRecordDir:
		rel := n.rel
		if n.Kind == KindRecordDir {
			rel = n.rd.rel
		}
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		if st, err := t.parentStat(dir); err == nil {
			parent = makeIno(fileKey(st.dev, st.ino), inoKindPlain, 0)
		}
	}
	return self, parent
}

// Records returns the number of record entries of the listing (0 for a
// mirrored directory).
func (d *Dir) Records() int64 { return d.count }

// OpenDir opens the directory n for listing. Listing a record directory of
// a tree mount indexes its record file.
func (t *Tree) OpenDir(ctx context.Context, n Node) (*Dir, error) {
	d := &Dir{t: t, n: n}
	switch n.Kind {
	case KindRecordDir:
		src, err := t.records(ctx, n.rd)
		if err != nil {
			return nil, err
		}
		d.count = src.Len()
		d.width = NameWidth(d.count)
		if src.HasTrailer() {
			d.extra = append(d.extra, DirEntry{Name: TrailerName, Mode: syscall.S_IFDIR, Ino: makeIno(n.rd.key, inoKindTrDir, 0)})
		}
		d.extra = append(d.extra, DirEntry{Name: InfoName, Mode: syscall.S_IFREG, Ino: makeIno(n.rd.key, inoKindInfo, 0)})
	case KindTrailerDir:
		d.count, d.width = 1, minNameWidth
	case KindDir:
		ents, err := t.listSource(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			fi, err := e.Info()
			if err != nil {
				continue // vanished since the listing
			}
			st, ok := t.entryStat(joinRel(n.rel, name), fi)
			if !ok {
				continue
			}
			c, ok := t.classify(joinRel(n.rel, name), st)
			if !ok {
				continue
			}
			de := DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: makeIno(fileKey(st.dev, st.ino), inoKindPlain, 0)}
			switch c.Kind {
			case KindDir:
				de.Mode = syscall.S_IFDIR
			case KindRecordDir:
				de.Mode, de.Ino = syscall.S_IFDIR, makeIno(c.rd.key, inoKindRecDir, 0)
			}
			d.extra = append(d.extra, de)
		}
		sort.Slice(d.extra, func(i, j int) bool { return d.extra[i].Name < d.extra[j].Name })
	default:
		return nil, syscall.ENOTDIR
	}
	return d, nil
}

// listSource lists the mirrored directory n through the source file
// system, after checking that the directory it opened is still the one n
// was looked up as. A source file system with a WithContext method (a
// remote one) lists under ctx, so that an interrupted request stops it.
func (t *Tree) listSource(ctx context.Context, n Node) ([]iofs.DirEntry, error) {
	fsys := t.fsys
	if c, ok := fsys.(interface {
		WithContext(context.Context) iofs.FS
	}); ok {
		fsys = c.WithContext(ctx)
	}
	f, err := fsys.Open(fsName(n.rel))
	if err != nil {
		return nil, t.srcErr("opendir", n.rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, t.srcErr("opendir", n.rel, err)
	}
	if st, ok := t.entryStat(n.rel, fi); !ok || !st.sameAs(n) {
		return nil, t.staleErr("opendir", n.rel, st)
	}
	rd, ok := f.(iofs.ReadDirFile)
	if !ok {
		return nil, t.srcErr("opendir", n.rel, syscall.ENOTDIR)
	}
	ents, err := rd.ReadDir(-1)
	if err != nil {
		return nil, &OpError{Op: "readdir", Path: t.abs(n.rel), Name: n.rel, Record: -1, Off: -1, Err: unwrapPath(err)}
	}
	return ents, nil
}

// Len returns the number of entries of the directory.
func (d *Dir) Len() uint64 { return uint64(len(d.dots)) + uint64(d.count) + uint64(len(d.extra)) }

// Next returns the next entry; ok is false at the end of the directory.
func (d *Dir) Next() (e DirEntry, ok bool) {
	if d.pos >= d.Len() {
		return DirEntry{}, false
	}
	i := d.pos
	d.pos++
	if i < uint64(len(d.dots)) {
		e = d.dots[i]
		e.Off = d.pos
		return e, true
	}
	i -= uint64(len(d.dots))
	if i < uint64(d.count) {
		d.buf = decode.AppendRecordNumber(d.buf[:0], int64(i), d.width)
		kind := uint8(inoKindRecord)
		if d.n.Kind == KindTrailerDir {
			kind = inoKindTrItem
		}
		return DirEntry{Name: string(d.buf), Mode: syscall.S_IFREG, Ino: makeIno(d.n.rd.key, kind, int64(i)), Off: d.pos}, true
	}
	e = d.extra[i-uint64(d.count)]
	e.Off = d.pos
	return e, true
}

// Seek positions the stream so that the next entry is the one after the
// entry whose Off was off (0: the start).
func (d *Dir) Seek(off uint64) error {
	if off > d.Len() {
		return iofs.ErrInvalid
	}
	d.pos = off
	return nil
}

// Close releases the directory.
func (d *Dir) Close() error { return nil }

// parentStat returns the attributes of the mirrored directory rel.
func (t *Tree) parentStat(rel string) (statInfo, error) {
	if t.rootd == nil {
		return t.statSource(rel)
	}
	return t.rootd.stat(rel)
}
