package fs

import (
	"context"
	"io"
	iofs "io/fs"
	"path"
	"strings"
	"syscall"
	"time"
)

// FS returns the tree as an io/fs.FS (also an io/fs.StatFS), for tools and
// tests that have no kernel. Files implement io.ReaderAt and io.Seeker.
func (t *Tree) FS() iofs.FS { return fsView{t} }

type fsView struct{ t *Tree }

var _ iofs.StatFS = fsView{}

// walk resolves a slash-separated path from the root.
func (v fsView) walk(op, name string) (Node, error) {
	if !iofs.ValidPath(name) {
		return Node{}, &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	n := v.t.Root()
	if name == "." {
		return n, nil
	}
	for _, el := range strings.Split(name, "/") {
		c, err := v.t.Lookup(context.Background(), n, el)
		if err != nil {
			if Errno(err) == syscall.ENOENT || Errno(err) == syscall.ENOTDIR {
				err = iofs.ErrNotExist
			}
			return Node{}, &iofs.PathError{Op: op, Path: name, Err: err}
		}
		n = c
	}
	return n, nil
}

func (v fsView) Open(name string) (iofs.File, error) {
	n, err := v.walk("open", name)
	if err != nil {
		return nil, err
	}
	a, err := v.t.Getattr(context.Background(), n)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	info := fileInfo{name: path.Base(name), a: a}
	if n.IsDir() {
		d, err := v.t.OpenDir(context.Background(), n)
		if err != nil {
			return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
		}
		return &dirFile{v: v, path: name, info: info, d: d}, nil
	}
	h, err := v.t.Open(context.Background(), n)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	return &regFile{info: info, sr: io.NewSectionReader(h, 0, a.Size), h: h}, nil
}

func (v fsView) Stat(name string) (iofs.FileInfo, error) {
	n, err := v.walk("stat", name)
	if err != nil {
		return nil, err
	}
	a, err := v.t.Getattr(context.Background(), n)
	if err != nil {
		return nil, &iofs.PathError{Op: "stat", Path: name, Err: err}
	}
	return fileInfo{name: path.Base(name), a: a}, nil
}

// fileInfo adapts Attr to io/fs.FileInfo; Sys returns the Attr.
type fileInfo struct {
	name string
	a    Attr
}

func (fi fileInfo) Name() string        { return fi.name }
func (fi fileInfo) Size() int64         { return fi.a.Size }
func (fi fileInfo) ModTime() time.Time  { return fi.a.Mtime }
func (fi fileInfo) IsDir() bool         { return fi.a.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (fi fileInfo) Sys() any            { return fi.a }
func (fi fileInfo) Mode() iofs.FileMode { return FileMode(fi.a.Mode) }

// FileMode turns stat mode bits (file type and permissions) into an
// io/fs.FileMode (which os.FileMode is): directories and symbolic links
// get their type bit, regular files none, any other type ModeIrregular.
// Every adapter that hands out a FileMode converts with it.
func FileMode(m uint32) iofs.FileMode {
	fm := iofs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		fm |= iofs.ModeDir
	case syscall.S_IFREG:
	case syscall.S_IFLNK:
		fm |= iofs.ModeSymlink
	default:
		fm |= iofs.ModeIrregular
	}
	return fm
}

// regFile is an open file of the view.
type regFile struct {
	info fileInfo
	sr   *io.SectionReader
	h    Handle
}

func (f *regFile) Stat() (iofs.FileInfo, error)              { return f.info, nil }
func (f *regFile) Read(p []byte) (int, error)                { return f.sr.Read(p) }
func (f *regFile) ReadAt(p []byte, off int64) (int, error)   { return f.sr.ReadAt(p, off) }
func (f *regFile) Seek(off int64, whence int) (int64, error) { return f.sr.Seek(off, whence) }
func (f *regFile) Close() error                              { return f.h.Close() }

// dirFile is an open directory of the view.
type dirFile struct {
	v    fsView
	path string
	info fileInfo
	d    *Dir
}

func (f *dirFile) Stat() (iofs.FileInfo, error) { return f.info, nil }
func (f *dirFile) Read([]byte) (int, error) {
	return 0, &iofs.PathError{Op: "read", Path: f.path, Err: syscall.EISDIR}
}
func (f *dirFile) Close() error { return f.d.Close() }

// ReadDir implements io/fs.ReadDirFile.
func (f *dirFile) ReadDir(count int) ([]iofs.DirEntry, error) {
	var out []iofs.DirEntry
	for count <= 0 || len(out) < count {
		e, ok := f.d.Next()
		if !ok {
			break
		}
		out = append(out, dirEntry{v: f.v, dir: f.path, e: e})
	}
	if count > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// dirEntry adapts DirEntry to io/fs.DirEntry.
type dirEntry struct {
	v   fsView
	dir string
	e   DirEntry
}

func (e dirEntry) Name() string { return e.e.Name }
func (e dirEntry) IsDir() bool  { return e.e.Mode == syscall.S_IFDIR }
func (e dirEntry) Type() iofs.FileMode {
	if e.IsDir() {
		return iofs.ModeDir
	}
	return 0
}
func (e dirEntry) Info() (iofs.FileInfo, error) { return e.v.Stat(path.Join(e.dir, e.e.Name)) }
