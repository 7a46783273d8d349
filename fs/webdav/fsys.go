package webdav

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"mime"
	"os"
	"path"
	"syscall"
	"time"

	xwebdav "golang.org/x/net/webdav"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// FileSystem is an fs.Tree as a read-only webdav.FileSystem: names
// resolve through the tree's Lookup one at a time, files read through its
// handles, and every change fails with an error matching
// io/fs.ErrPermission.
type FileSystem struct {
	t      *fs.Tree
	r      *serve.Resolver
	stamps *serve.Stamps
}

var _ xwebdav.FileSystem = (*FileSystem)(nil)

// errReadOnly is what every change gets.
var errReadOnly = fmt.Errorf("webdav: read-only: %w", iofs.ErrPermission)

// Mkdir fails: the tree is read-only.
func (f *FileSystem) Mkdir(context.Context, string, os.FileMode) error { return errReadOnly }

// RemoveAll fails: the tree is read-only.
func (f *FileSystem) RemoveAll(context.Context, string) error { return errReadOnly }

// Rename fails: the tree is read-only.
func (f *FileSystem) Rename(context.Context, string, string) error { return errReadOnly }

// entry is a resolved name: its node, its parent and its attributes with
// the change stamps folded in.
type entry struct {
	n, parent fs.Node
	info      *FileInfo
}

// resolve finds the entry at the request path name; errors meaning "no
// such entry" match io/fs.ErrNotExist, as x/net/webdav expects.
func (f *FileSystem) resolve(ctx context.Context, name string) (entry, error) {
	e, err := f.lookup(ctx, name)
	return e, notExist(err)
}

// lookup finds the entry at the request path name.
func (f *FileSystem) lookup(ctx context.Context, name string) (entry, error) {
	names, err := serve.Split(name)
	if err != nil {
		return entry{}, err
	}
	var e entry
	err = f.r.Do(ctx, names, func(n, parent fs.Node) error {
		info, err := f.info(ctx, n, parent, path.Base("/"+name))
		e = entry{n: n, parent: parent, info: info}
		return err
	})
	return e, err
}

// notExist makes the errors that mean "no such entry" match
// io/fs.ErrNotExist, as x/net/webdav expects.
func notExist(err error) error {
	if err != nil && serve.NotFound(err) && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %w", iofs.ErrNotExist, err)
	}
	return err
}

// info returns the FileInfo of n (parent is its directory).
func (f *FileSystem) info(ctx context.Context, n, parent fs.Node, name string) (*FileInfo, error) {
	a, st, err := f.stamps.Attr(ctx, f.t, n, parent)
	if err != nil {
		return nil, err
	}
	return &FileInfo{name: name, a: a, kind: n.Kind, stamp: st}, nil
}

// Stat returns the attributes of the entry at name.
func (f *FileSystem) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	e, err := f.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	return e.info, nil
}

// OpenFile opens the entry at name for reading; any flag that asks to
// write fails.
func (f *FileSystem) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (xwebdav.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, errReadOnly
	}
	e, err := f.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	file := &File{fsy: f, e: e}
	if !e.n.IsDir() {
		h, err := f.t.Open(ctx, e.n)
		if err != nil {
			return nil, notExist(err)
		}
		file.h = h
	}
	return file, nil
}

// File is an open entry of the tree.
type File struct {
	fsy *FileSystem
	e   entry
	h   fs.Handle // files
	off int64
	d   *fs.Dir // directories, once Readdir is called
}

var _ xwebdav.File = (*File)(nil)

// Read reads from the current offset.
func (f *File) Read(p []byte) (int, error) {
	if f.h == nil {
		return 0, syscall.EISDIR
	}
	if f.off >= f.e.info.Size() {
		return 0, io.EOF
	}
	n, err := f.h.ReadAt(p, f.off)
	f.off += int64(n)
	switch {
	case err == io.EOF && n > 0:
		err = nil
	case err != nil && err != io.EOF:
		// The response is cut short: the client sees a failed transfer,
		// never bytes of the wrong version.
		f.fsy.t.Report(err)
	}
	return n, err
}

// Seek moves the offset.
func (f *File) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		off += f.e.info.Size()
	default:
		return f.off, iofs.ErrInvalid
	}
	if off < 0 {
		return f.off, iofs.ErrInvalid
	}
	f.off = off
	return off, nil
}

// Write fails: the tree is read-only.
func (f *File) Write([]byte) (int, error) { return 0, errReadOnly }

// Stat returns the entry's attributes.
func (f *File) Stat() (os.FileInfo, error) { return f.e.info, nil }

// Readdir returns the next count entries of a directory (all of them when
// count <= 0), with their attributes.
func (f *File) Readdir(count int) ([]os.FileInfo, error) {
	if !f.e.n.IsDir() {
		return nil, syscall.ENOTDIR
	}
	ctx := context.Background()
	if f.d == nil {
		d, err := f.fsy.t.OpenDir(ctx, f.e.n)
		if err != nil {
			return nil, err
		}
		f.d = d
	}
	var out []os.FileInfo
	for count <= 0 || len(out) < count {
		de, ok := f.d.Next()
		if !ok {
			break
		}
		c, err := f.fsy.r.Lookup(ctx, f.e.n, de.Name)
		if err != nil {
			continue // gone since the listing
		}
		fi, err := f.fsy.info(ctx, c, f.e.n, de.Name)
		if err != nil {
			continue
		}
		out = append(out, fi)
	}
	if count > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// Close closes the entry.
func (f *File) Close() error {
	var err error
	if f.h != nil {
		err = f.h.Close()
	}
	if f.d != nil {
		f.d.Close()
	}
	return err
}

// FileInfo describes an entry of the tree. It implements x/net/webdav's
// ETager and ContentTyper, so that neither reads the entry.
type FileInfo struct {
	name  string
	a     fs.Attr
	kind  fs.Kind
	stamp serve.Stamp
}

var (
	_ xwebdav.ETager       = (*FileInfo)(nil)
	_ xwebdav.ContentTyper = (*FileInfo)(nil)
)

// Name returns the entry's name.
func (fi *FileInfo) Name() string { return fi.name }

// Size returns the entry's size.
func (fi *FileInfo) Size() int64 { return fi.a.Size }

// Mode returns the entry's type and permission bits.
func (fi *FileInfo) Mode() os.FileMode {
	m := os.FileMode(fi.a.Mode & 0o777)
	if fi.IsDir() {
		m |= os.ModeDir
	}
	return m
}

// ModTime returns the entry's modification time.
func (fi *FileInfo) ModTime() time.Time { return fi.a.Mtime }

// IsDir reports whether the entry is a directory.
func (fi *FileInfo) IsDir() bool { return fi.a.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// Sys returns the tree's attributes (an fs.Attr).
func (fi *FileInfo) Sys() any { return fi.a }

// ETag returns the entry's validator (see fs/serve.ETag).
func (fi *FileInfo) ETag(context.Context) (string, error) { return serve.ETag(fi.a, fi.stamp), nil }

// ContentType returns the entry's media type: text for .recfs and
// .recfs-summary, the extension's type for a passed-through file, bytes
// for records.
func (fi *FileInfo) ContentType(context.Context) (string, error) {
	switch fi.kind {
	case fs.KindInfo, fs.KindSummary:
		return "text/plain; charset=utf-8", nil
	case fs.KindFile:
		if t := mime.TypeByExtension(path.Ext(fi.name)); t != "" {
			return t, nil
		}
	}
	return "application/octet-stream", nil
}
