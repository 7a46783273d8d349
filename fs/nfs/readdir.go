package nfs

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"strings"

	gonfs "github.com/willscott/go-nfs"

	"github.com/recfs/recfs/fs"
)

// Sizes of the encoded parts of a directory listing.
const (
	postOpAttrSize = 4 + 84 // present flag and fattr3
	dirHeaderSize  = 4 + postOpAttrSize + 8
	dirFooterSize  = 4 + 4 // no more entries, eof
)

// verifier returns the cookie verifier of the directory n with
// attributes a: it changes when the directory's source changes (a
// mirrored directory's time) or its record file is rewritten, after which
// the positions cookies name are no longer the same entries.
func (s *Server) verifier(n fs.Node, a *gonfs.FileAttribute) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], a.Fileid)
	h.Write(b[:])
	switch n.Kind {
	case fs.KindDir:
		binary.BigEndian.PutUint32(b[:], a.Mtime.Seconds)
		binary.BigEndian.PutUint32(b[4:], a.Mtime.Nseconds)
	case fs.KindRecordDir:
		binary.BigEndian.PutUint64(b[:], s.o.Stamps.Of(n).Epoch)
	}
	h.Write(b[:])
	return h.Sum64() | 1 // never 0, which means "none"
}

// readDir answers READDIR and READDIRPLUS from the tree's directory
// stream: a cookie is the position after an entry (fs.DirEntry.Off), so a
// call resumes with a Seek, and nothing but the reply is held.
func (s *Server) readDir(ctx context.Context, args []byte, plus bool) ([]byte, error) {
	r := xdrReader{b: args}
	dir, parent, names, err := s.node(ctx, &r)
	cookie := r.u64()
	verf := binary.BigEndian.Uint64(r.fixed(8))
	dirCount := r.u32()
	maxCount := dirCount
	if plus {
		maxCount = r.u32()
	}
	if r.err != nil {
		return nil, r.err
	}
	if err != nil {
		return failure(s.status(err)), nil
	}
	if !dir.IsDir() {
		return failure(nfsErrNotDir), nil
	}
	dirAttr, err := s.nfsAttr(ctx, dir, parent, last(names))
	if err != nil {
		return failure(s.status(err)), nil
	}
	fail := func(status uint32) []byte {
		var w xdrWriter
		w.u32(status)
		_ = gonfs.WritePostOpAttrs(&w, dirAttr)
		return w.b
	}
	cv := s.verifier(dir, dirAttr)
	if cookie != 0 && verf != 0 && verf != cv {
		return fail(nfsErrBadCook), nil
	}
	maxCount = min(maxCount, maxDirReply)
	d, err := s.t.OpenDir(ctx, dir)
	if err != nil {
		return fail(s.status(err)), nil
	}
	defer d.Close()
	d.WithDots(ctx)

	var w xdrWriter
	w.u32(nfsOK)
	_ = gonfs.WritePostOpAttrs(&w, dirAttr)
	w.u64(cv)
	eof := d.Seek(cookie) != nil // past the end: nothing more
	var anchor handle
	if dir.Kind == fs.KindRecordDir || dir.Kind == fs.KindTrailerDir {
		anchor = handle{kind: fs.KindRecord, ino: dirAttr.Fileid, path: strings.Join(names, "/")}
		anchor.epoch = uint32(s.o.Stamps.Of(dir).Epoch)
	}
	entries, dirBytes := 0, 0
	for !eof {
		e, ok := d.Next()
		if !ok {
			eof = true
			break
		}
		var ent xdrWriter
		ent.bool(true)
		ent.u64(e.Ino)
		ent.opaque([]byte(e.Name))
		ent.u64(e.Off)
		info := len(ent.b) - 4
		if plus {
			s.entryPlus(ctx, &ent, d, dir, names, anchor, e)
		}
		if len(w.b)+len(ent.b)+dirFooterSize > int(maxCount) || plus && dirBytes+info > int(dirCount) {
			if entries == 0 {
				return fail(nfsErrTooSmall), nil
			}
			break
		}
		w.b = append(w.b, ent.b...)
		entries++
		dirBytes += info
	}
	w.bool(false)
	w.bool(eof)
	return w.b, nil
}

// entryPlus appends the attributes and handle of the entry e of dir
// (whose path is names) to a READDIRPLUS entry.
func (s *Server) entryPlus(ctx context.Context, w *xdrWriter, list *fs.Dir, dir fs.Node, names []string, anchor handle, e fs.DirEntry) {
	var c, cdir fs.Node
	var fh []byte
	var err error
	cdir = dir
	switch rec, ok := list.Record(e); {
	case e.Name == "." || e.Name == "..":
		p := names
		if e.Name == ".." && len(p) > 0 {
			p = p[:len(p)-1]
		}
		err = s.r.Do(ctx, p, func(n, parent fs.Node) error {
			c, cdir = n, parent
			return nil
		})
		if err == nil {
			fh, err = s.toHandle(ctx, p)
		}
	case ok:
		c = rec
		h := anchor
		h.n = rec.N
		fh = s.paths.encode(h)
	default:
		c, err = s.r.Lookup(ctx, dir, e.Name)
		if err == nil {
			fh, err = s.toHandle(ctx, append(names[:len(names):len(names)], e.Name))
		}
	}
	if err != nil {
		w.bool(false)
		w.bool(false)
		return
	}
	a, err := s.nfsAttr(ctx, c, cdir, e.Name)
	if err != nil {
		w.bool(false)
	} else {
		_ = gonfs.WritePostOpAttrs(w, a)
	}
	w.bool(true)
	w.opaque(fh)
}
