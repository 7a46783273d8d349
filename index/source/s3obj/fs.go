package s3obj

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// FS is an io/fs.FS over the objects under one key prefix: "/" in keys
// separates directories, listings are fetched lazily a page at a time with
// ListObjectsV2, and Open of an object returns a *File whose ReadAt is the
// object's pinned, cached reader.
type FS struct {
	c      *Client
	bucket string
	prefix string // "" or ending in "/"
	ctx    context.Context
}

var (
	_ fs.FS        = (*FS)(nil)
	_ fs.StatFS    = (*FS)(nil)
	_ fs.ReadDirFS = (*FS)(nil)
)

// FS returns the tree under prefix in bucket; a non-empty prefix is taken
// as a directory (a "/" is added). ctx bounds its requests.
func (c *Client) FS(ctx context.Context, bucket, prefix string) *FS {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &FS{c: c, bucket: bucket, prefix: prefix, ctx: ctx}
}

func (f *FS) key(name string) string {
	if name == "." {
		return f.prefix
	}
	return f.prefix + name
}

// Open opens an object (one HEAD) or a directory (one list request of at
// most one key, when no object has the name).
func (f *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name != "." {
		obj, err := f.c.Open(f.ctx, f.bucket, f.key(name))
		if err == nil {
			return &File{Object: obj, name: path.Base(name)}, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		ok, err := f.isDir(name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
	}
	return &dir{fs: f, name: name, prefix: f.key(name) + dirSep(name)}, nil
}

func dirSep(name string) string {
	if name == "." {
		return ""
	}
	return "/"
}

func (f *FS) isDir(name string) (bool, error) {
	out, err := f.c.api.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket,
		Prefix: aws.String(f.key(name) + "/"), MaxKeys: aws.Int32(1)})
	if err != nil {
		return false, fmt.Errorf("s3obj: list s3://%s/%s/: %w", f.bucket, f.key(name), err)
	}
	return len(out.Contents) > 0 || len(out.CommonPrefixes) > 0, nil
}

// Stat opens name and stats it.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	fl, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	return fl.Stat()
}

// ReadDir lists a directory completely, sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	fl, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	d, ok := fl.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	ents, err := d.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// File is an opened object in an FS: an fs.File that is also the object's
// source (ReadAt, Size, Identity, Stat via HEAD is Object.Stat; fs's Stat is
// Info).
type File struct {
	*Object
	name string
	off  int64
}

// Stat describes the object as opened (fs.File's Stat; the Stater's is
// Object.Stat, reached as f.Object.Stat()).
func (f *File) Stat() (fs.FileInfo, error) {
	return fileInfo{name: f.name, size: f.size, mod: f.modTime}, nil
}

// Read reads sequentially through the cache.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

type dir struct {
	fs     *FS
	name   string
	prefix string
	token  *string
	done   bool
	buf    []fs.DirEntry
}

func (d *dir) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(d.name), dir: true}, nil
}
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}
func (d *dir) Close() error { return nil }

// ReadDir returns the next n entries, fetching list pages as needed.
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for n <= 0 || len(out) < n {
		if len(d.buf) == 0 {
			if d.done {
				break
			}
			if err := d.page(); err != nil {
				return out, err
			}
			continue
		}
		k := len(d.buf)
		if n > 0 {
			k = min(k, n-len(out))
		}
		out = append(out, d.buf[:k]...)
		d.buf = d.buf[k:]
	}
	if n > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

// page fetches one ListObjectsV2 page of the directory.
func (d *dir) page() error {
	f := d.fs
	res, err := f.c.api.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket,
		Prefix: aws.String(d.prefix), Delimiter: aws.String("/"), ContinuationToken: d.token})
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: d.name, Err: err}
	}
	// A page's prefixes and objects come in two lists; keep the store's
	// key order across both.
	start := len(d.buf)
	defer func() {
		page := d.buf[start:]
		slices.SortStableFunc(page, func(a, b fs.DirEntry) int {
			return strings.Compare(sortKey(a), sortKey(b))
		})
	}()
	for _, cp := range res.CommonPrefixes {
		name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), d.prefix), "/")
		if validName(name) {
			d.buf = append(d.buf, fs.FileInfoToDirEntry(fileInfo{name: name, dir: true}))
		}
	}
	for _, o := range res.Contents {
		name := strings.TrimPrefix(aws.ToString(o.Key), d.prefix)
		if !validName(name) {
			continue // the directory's own marker object, or a key fs cannot name
		}
		fi := fileInfo{name: name, size: aws.ToInt64(o.Size)}
		if o.LastModified != nil {
			// A listing may give milliseconds; HEAD's Last-Modified has
			// whole seconds. Both must describe the object alike.
			fi.mod = o.LastModified.Truncate(time.Second)
		}
		d.buf = append(d.buf, fs.FileInfoToDirEntry(fi))
	}
	d.token = res.NextContinuationToken
	d.done = !aws.ToBool(res.IsTruncated) || d.token == nil
	return nil
}

// sortKey is an entry's key relative to its directory (directories end in
// "/", as the store orders them).
func sortKey(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.Contains(n, "/")
}

type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) ModTime() time.Time { return fi.mod }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }
func (fi fileInfo) Mode() fs.FileMode {
	if fi.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
