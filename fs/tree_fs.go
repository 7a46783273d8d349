package fs

import (
	"context"
	"fmt"
	"hash/fnv"
	iofs "io/fs"
	"os"
	"strings"
	"time"
)

// FSOpenFunc returns the table of a record file of a tree over an io/fs.FS
// (see NewFSTree): name is its io/fs name, f the file the tree opened (an
// io.ReaderAt of the version it detected). The function keeps f for its
// table on success; on failure the tree closes it. It must not open name
// again.
type FSOpenFunc func(ctx context.Context, name string, f iofs.File) (Records, error)

// NewFSTree returns the read-only tree of fsys, a file system that is not a
// local directory (the objects under a prefix of a bucket, say): its
// directories are mirrored, listed through fsys when they are read, every
// record file (as o.Detect says of the file fsys opens) becomes a record
// directory whose table open makes on first use, and other regular files
// are passed through read-only. name names the tree in logs and .recfs.
//
// Entries whose FileInfo.Sys is not a *SourceStat get an inode number from
// their path, the mounting user as owner, and their FileInfo's size, time
// and permission bits; a file whose size or time changed is detected anew.
// Every change fails with EROFS.
func NewFSTree(name string, fsys iofs.FS, open FSOpenFunc, o Options) (*Tree, error) {
	if open == nil || o.Detect == nil {
		return nil, fmt.Errorf("fs: NewFSTree needs an open function and Options.Detect")
	}
	o.ReadWrite, o.Create = false, nil
	t := newTree(name, o)
	t.fsys, t.fsOpen, t.made = fsys, open, time.Now()
	fi, err := iofs.Stat(fsys, ".")
	if err != nil {
		return nil, err
	}
	st, ok := t.entryStat("", fi)
	if !ok || st.typ != typeDir {
		return nil, fmt.Errorf("fs: %s is not a directory", name)
	}
	t.root = Node{Kind: KindDir, dev: st.dev, ino: st.ino}
	return t, nil
}

// entryStat returns the tree's view of fi, the FileInfo of the source
// entry rel. In a tree over an io/fs.FS whose entries carry no
// *SourceStat, it is made from fi (see NewFSTree); ok is false for an
// entry that is neither a directory nor a regular file, or when the local
// source file system did not give one.
func (t *Tree) entryStat(rel string, fi iofs.FileInfo) (statInfo, bool) {
	if st, ok := statOfInfo(fi); ok {
		return st, true
	}
	if t.fsOpen == nil {
		return statInfo{}, false
	}
	var typ uint32
	switch {
	case fi.IsDir():
		typ = typeDir
	case fi.Mode().IsRegular():
		typ = typeReg
	default:
		return statInfo{}, false
	}
	h := fnv.New64a()
	h.Write([]byte(rel))
	mt := fi.ModTime()
	if mt.IsZero() {
		mt = t.made // directories of an object store have no time of their own
	}
	return statInfo{ino: h.Sum64(), uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), mode: uint32(fi.Mode().Perm()),
		typ: typ, size: fi.Size(), atime: mt, mtime: mt, ctime: mt}, true
}

// openFSSource opens the record file rd of a tree over an io/fs.FS: the
// file fsys opens now must still have the size and time rd was detected
// with, and open makes its table.
func (t *Tree) openFSSource(ctx context.Context, rd *recDir) (Records, error) {
	f, st, err := t.openSourceFile(rd.rel)
	if err != nil {
		return nil, t.srcErr("index", rd.rel, err)
	}
	if !st.same(rd.st) || st.size != rd.st.size || !st.mtime.Equal(rd.st.mtime) {
		f.Close()
		return nil, t.staleErr("index", rd.rel, st)
	}
	src, err := t.fsOpen(ctx, fsName(rd.rel), f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// fsAbs is abs for a tree over an io/fs.FS: its name and rel joined by a
// slash.
func (t *Tree) fsAbs(rel string) string {
	return strings.TrimSuffix(t.src, "/") + "/" + rel
}
