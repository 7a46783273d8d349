package fs

import (
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"syscall"
	"time"
)

// The source of a directory tree as an io/fs.FS. A directory mount lists,
// stats and opens the entries it mirrors through this interface, so that
// another listing (object keys of a bucket, say) can stand in for a local
// directory later. os.DirFS cannot serve here: it follows symbolic links,
// and a user who can write in the tree could then make the daemon open
// files outside it. sourceFS resolves every name beneath the root's open
// descriptor without following a link at any component (see
// beneath_linux.go), and gives (device, inode) in FileInfo.Sys (a
// [SourceStat]) so that the tree can check it still has the entry it
// looked up.
//
// What stays on the descriptors directly (beneath_*.go): a lookup (it
// checks the parent directory's identity and stats the name through the
// same descriptor), mkdir (O_EXCL create in the parent's descriptor) and
// the opens that hand an *os.File to the index.

// SourceStat is FileInfo.Sys of the tree's source file system: the
// identity and attributes of the entry, as lstat(2) gives them.
type SourceStat struct {
	Dev, Ino            uint64
	UID, GID            uint32
	Mode                uint32 // file type and permission bits (S_IFMT | 0o777)
	Size                int64
	Atime, Mtime, Ctime time.Time
}

// sourceFS is the source root as an io/fs.FS, io/fs.StatFS and
// io/fs.ReadDirFS. Stat and ReadDir do not follow symbolic links (they
// report them as such); Open of a symbolic link fails (ELOOP). Directories
// open for listing; regular files open read-only (and implement
// io.ReaderAt).
type sourceFS struct{ r *rootDir }

var (
	_ iofs.StatFS    = sourceFS{}
	_ iofs.ReadDirFS = sourceFS{}
)

// relOf turns a valid io/fs name into the tree's relative path ("" for
// the root).
func relOf(op, name string) (string, error) {
	if !iofs.ValidPath(name) {
		return "", &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	if name == "." {
		return "", nil
	}
	return name, nil
}

// fsName is the io/fs name of the tree's relative path rel.
func fsName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// Open opens the directory or regular file name.
func (s sourceFS) Open(name string) (iofs.File, error) {
	rel, err := relOf("open", name)
	if err != nil {
		return nil, err
	}
	st, err := s.r.stat(rel)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	if st.typ == typeDir {
		d, err := s.r.openDir(rel, true)
		if err != nil {
			return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
		}
		return &sourceDir{d: d, name: name}, nil
	}
	f, fst, err := s.r.openFile(rel)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	return &sourceFile{File: f, info: sourceInfo{name: path.Base(name), st: fst}}, nil
}

// Stat returns the attributes of name, not following a symbolic link.
func (s sourceFS) Stat(name string) (iofs.FileInfo, error) {
	rel, err := relOf("stat", name)
	if err != nil {
		return nil, err
	}
	st, err := s.r.stat(rel)
	if err != nil {
		return nil, &iofs.PathError{Op: "stat", Path: name, Err: err}
	}
	return sourceInfo{name: path.Base(name), st: st}, nil
}

// ReadDir lists the directory name, sorted by name. Entries that vanish
// while it is read are left out.
func (s sourceFS) ReadDir(name string) ([]iofs.DirEntry, error) {
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, ok := f.(*sourceDir)
	if !ok {
		return nil, &iofs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	return d.ReadDir(-1)
}

// sourceInfo is the io/fs.FileInfo (and DirEntry) of a source entry.
type sourceInfo struct {
	name string
	st   statInfo
}

func (fi sourceInfo) Name() string        { return fi.name }
func (fi sourceInfo) Size() int64         { return fi.st.size }
func (fi sourceInfo) ModTime() time.Time  { return fi.st.mtime }
func (fi sourceInfo) IsDir() bool         { return fi.st.typ == typeDir }
func (fi sourceInfo) Mode() iofs.FileMode { return FileMode(fi.st.typ | fi.st.mode) }

// Sys returns the entry's SourceStat.
func (fi sourceInfo) Sys() any {
	st := fi.st
	return &SourceStat{Dev: st.dev, Ino: st.ino, UID: st.uid, GID: st.gid, Mode: st.typ | st.mode, Size: st.size,
		Atime: st.atime, Mtime: st.mtime, Ctime: st.ctime}
}

func (fi sourceInfo) Type() iofs.FileMode          { return fi.Mode().Type() }
func (fi sourceInfo) Info() (iofs.FileInfo, error) { return fi, nil }

// statOfInfo returns the tree's view of fi, a FileInfo of the source file
// system (whose Sys is a *SourceStat); ok is false for any other.
func statOfInfo(fi iofs.FileInfo) (statInfo, bool) {
	if si, ok := fi.(sourceInfo); ok {
		return si.st, true
	}
	ss, ok := fi.Sys().(*SourceStat)
	if !ok {
		return statInfo{}, false
	}
	return statInfo{dev: ss.Dev, ino: ss.Ino, uid: ss.UID, gid: ss.GID, mode: ss.Mode & 0o777, typ: ss.Mode & syscall.S_IFMT,
		size: ss.Size, atime: ss.Atime, mtime: ss.Mtime, ctime: ss.Ctime}, true
}

// sourceFile is an open regular file of the source.
type sourceFile struct {
	*os.File
	info sourceInfo
}

// Stat returns the attributes the file had when it was opened.
func (f *sourceFile) Stat() (iofs.FileInfo, error) { return f.info, nil }

// sourceDir is an open directory of the source: its listing and the
// attributes of its entries come from the one descriptor.
type sourceDir struct {
	d     *dirFD
	name  string
	names []string // what is left to list, once listed
	read  bool
}

var _ iofs.ReadDirFile = (*sourceDir)(nil)

// Stat returns the directory's attributes as of its open.
func (d *sourceDir) Stat() (iofs.FileInfo, error) {
	return sourceInfo{name: path.Base(d.name), st: d.d.st}, nil
}

func (d *sourceDir) Read([]byte) (int, error) {
	return 0, &iofs.PathError{Op: "read", Path: d.name, Err: syscall.EISDIR}
}

func (d *sourceDir) Close() error { return d.d.close() }

// ReadDir returns the next count entries (all with count <= 0), sorted by
// name, each stat'ed (without following links) through the directory's
// descriptor. Entries that vanished since the listing are left out.
func (d *sourceDir) ReadDir(count int) ([]iofs.DirEntry, error) {
	if !d.read {
		names, err := d.d.names()
		if err != nil {
			return nil, &iofs.PathError{Op: "readdir", Path: d.name, Err: err}
		}
		sort.Strings(names)
		d.names, d.read = names, true
	}
	var out []iofs.DirEntry
	for len(d.names) > 0 && (count <= 0 || len(out) < count) {
		name := d.names[0]
		d.names = d.names[1:]
		st, err := d.d.statAt(name)
		if err != nil {
			continue // vanished since the listing
		}
		out = append(out, sourceInfo{name: name, st: st})
	}
	if count > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}
