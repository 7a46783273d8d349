package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sirupsen/logrus"
)

// FS is an io/fs.FS over the objects under one key prefix: "/" in keys
// separates directories, listings are fetched lazily a page at a time with
// ListObjectsV2, and Open of an object returns a *File whose ReadAt is the
// object's pinned, cached reader.
//
// A listing keeps every entry a kernel can name, each once, within
// bounds:
//   - a key whose name (its last segment) is longer than MaxNameLen bytes,
//     or holds a NUL, is left out; the first listing of its directory says
//     how many were, in one log line;
//   - a key or prefix the store lists twice is listed once;
//   - when an object and a prefix have the same name, the directory keeps
//     the name and the object is listed (and opened) as the name followed
//     by ObjectSuffix, unless a key already has that name;
//   - a listing ends after Options.ListMaxPages pages or ListMaxBytes of
//     names, with one log line; a continuation token the store sends
//     twice fails the listing (ErrListLoop).
type FS struct {
	c      *Client
	bucket string
	prefix string // "" or ending in "/"
	ctx    context.Context
	req    context.Context // nil, or the context of one caller (WithContext)
	st     *fsState
	side   string // sidecar suffix (WithSidecars), or ""
}

// fsState is what the listings of an FS have learned, shared by its
// WithContext copies.
type fsState struct {
	mu sync.Mutex
	// twins holds, for each directory listed to its end (by prefix), the
	// names both an object and a prefix have.
	twins  map[string]map[string]bool
	warned map[string]bool // directory prefix + what: logged already
}

// maxRemembered bounds fsState's maps: past it they start over.
const maxRemembered = 4096

// Names in listings.
const (
	// MaxNameLen is the longest name a kernel takes.
	MaxNameLen = 255
	// ObjectSuffix is appended to the name of an object that a prefix
	// (a directory) has too.
	ObjectSuffix = ".recfs-object"
)

// ErrListLoop reports a store that sent the same continuation token twice
// in one listing.
var ErrListLoop = errors.New("s3: the store repeated a continuation token")

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
	return &FS{c: c, bucket: bucket, prefix: prefix, ctx: ctx,
		st: &fsState{twins: map[string]map[string]bool{}, warned: map[string]bool{}}}
}

// WithContext returns the same tree whose requests also end when ctx
// does (a FUSE request that is interrupted), not only when the FS's own
// context does.
func (f *FS) WithContext(ctx context.Context) fs.FS {
	g := *f
	g.req = ctx
	return &g
}

// WithSidecars returns the same tree where objects whose name ends in
// suffix (after at least one byte) are sidecars: they are neither listed
// nor opened, and the ListedObject of each listed object tells whether its
// sidecar (its name followed by suffix) was listed beside it.
func (f *FS) WithSidecars(suffix string) *FS {
	g := *f
	g.side = suffix
	return &g
}

// isSidecar tells whether an object called name is a sidecar.
func (f *FS) isSidecar(name string) bool {
	return f.side != "" && len(name) > len(f.side) && strings.HasSuffix(name, f.side)
}

// ListedObject is what the FileInfo of a listed object (a ReadDir entry's
// Info) returns from Sys: what the listing said of it.
type ListedObject struct {
	Key  string // the object's key (its name may be an alias, see FS)
	ETag string // as listed, quotes included ("" if none)
	// Sidecar tells whether the object's sidecar was listed (see
	// WithSidecars).
	Sidecar bool
}

// call runs fn with a context that ends when the FS's or the caller's
// does.
func (f *FS) call(fn func(context.Context) error) error {
	if f.req == nil {
		return fn(f.ctx)
	}
	ctx, cancel := context.WithCancelCause(f.req)
	defer cancel(nil)
	stop := context.AfterFunc(f.ctx, func() { cancel(context.Cause(f.ctx)) })
	defer stop()
	return fn(ctx)
}

func (f *FS) key(name string) string {
	if name == "." {
		return f.prefix
	}
	return f.prefix + name
}

// Open opens an object (one HEAD) or a directory (one list request of at
// most one key, when no object has the name). When an object has the name,
// a list request tells whether a prefix has it too (and then the directory
// is opened), unless a listing of its directory already told.
func (f *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return f.openDir(name), nil
	}
	if twin, known := f.twin(name); known && twin {
		return f.openDir(name), nil
	}
	var fl *File
	err := fmt.Errorf("%w: sidecar", ErrNotFound)
	if !f.isSidecar(path.Base(name)) {
		fl, err = f.openObject(name, name)
	}
	if err == nil {
		if _, known := f.twin(name); !known {
			ok, err := f.isDir(name)
			if err != nil {
				fl.Close()
				return nil, &fs.PathError{Op: "open", Path: name, Err: err}
			}
			if ok {
				fl.Close()
				return f.openDir(name), nil
			}
		}
		return fl, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	ok, err := f.isDir(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if ok {
		return f.openDir(name), nil
	}
	// name+ObjectSuffix: the object a directory has the name of.
	if base, ok := strings.CutSuffix(name, ObjectSuffix); ok && validName(path.Base(base)) {
		if twin, known := f.twin(base); !known || twin {
			if fl, err := f.openObject(base, name); err == nil {
				if twin, _ := f.twin(base); twin {
					return fl, nil
				}
				if ok, err := f.isDir(base); err == nil && ok {
					return fl, nil
				}
				fl.Close()
			}
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// openObject opens the object of the path key as a File called name.
func (f *FS) openObject(key, name string) (*File, error) {
	var obj *Object
	err := f.call(func(ctx context.Context) error {
		var err error
		obj, err = f.c.Open(ctx, f.bucket, f.key(key))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &File{Object: obj, name: path.Base(name)}, nil
}

func (f *FS) openDir(name string) *dir {
	return &dir{fs: f, name: name, prefix: f.key(name) + dirSep(name)}
}

// twin tells whether the last complete listing of name's directory had an
// object and a prefix both called name (known is false when there was
// none).
func (f *FS) twin(name string) (twin, known bool) {
	parent := path.Dir(name)
	pp := f.key(parent) + dirSep(parent)
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	t, known := f.st.twins[pp]
	return t[path.Base(name)], known
}

func dirSep(name string) string {
	if name == "." {
		return ""
	}
	return "/"
}

func (f *FS) isDir(name string) (bool, error) {
	var out *s3.ListObjectsV2Output
	err := f.call(func(ctx context.Context) error {
		var err error
		out, err = f.c.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket,
			Prefix: aws.String(f.key(name) + "/"), MaxKeys: aws.Int32(1)})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("s3: list s3://%s/%s/: %w", f.bucket, f.key(name), err)
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

	// The listing so far (see FS): its pages and bytes, the tokens the
	// store sent, the names listed and how, objects held back until it is
	// known whether a prefix has their name too, and names left out.
	pages  int
	bytes  int64
	tokens map[string]bool
	seen   map[string]uint8
	held   map[string]fileInfo
	twins  map[string]bool
	sides  map[string]bool // names whose sidecar was listed
	maxKey string
	long   int
	first  string // the first long name
	taken  int    // objects whose ObjectSuffix name a key had
}

// Kinds of a name in a listing.
const (
	seenObject = 1 << iota
	seenPrefix
)

// entryCost is what a listed name is counted as beyond its bytes (the
// entry's memory here and in a mount's directory).
const entryCost = 128

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

// page fetches one ListObjectsV2 page of the directory, or ends a listing
// past its bounds.
func (d *dir) page() error {
	f := d.fs
	o := &f.c.opt
	if d.pages >= o.ListMaxPages || d.bytes >= o.ListMaxBytes {
		f.warnOnce(d.prefix, "cut", func(l logrus.FieldLogger) {
			l.WithFields(logrus.Fields{"pages": d.pages, "bytes": d.bytes, "max_pages": o.ListMaxPages, "max_bytes": o.ListMaxBytes}).
				Warn("s3: listing too long; it ends here (later entries are not shown)")
		})
		d.finish(false)
		return nil
	}
	if d.seen == nil {
		d.tokens, d.seen = map[string]bool{}, map[string]uint8{}
		d.held, d.twins, d.sides = map[string]fileInfo{}, map[string]bool{}, map[string]bool{}
	}
	var res *s3.ListObjectsV2Output
	err := f.call(func(ctx context.Context) error {
		var err error
		res, err = f.c.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket,
			Prefix: aws.String(d.prefix), Delimiter: aws.String("/"), ContinuationToken: d.token})
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: d.name, Err: err}
	}
	d.pages++
	start := len(d.buf)
	// Sidecars first: X.suffix sorts before X/, so the page that lists a
	// prefix X/ (and makes the object X a twin, listed at once) or any key
	// past it lists X's sidecar too, or an earlier page did.
	for _, c := range res.Contents {
		name, ok := strings.CutPrefix(aws.ToString(c.Key), d.prefix)
		if ok && f.isSidecar(name) {
			d.sides[strings.TrimSuffix(name, f.side)] = true
		}
	}
	for _, cp := range res.CommonPrefixes {
		key := aws.ToString(cp.Prefix)
		d.count(key)
		name, under := strings.CutPrefix(key, d.prefix)
		if name, ok := strings.CutSuffix(name, "/"); under && ok {
			d.addDir(name)
		}
	}
	for _, c := range res.Contents {
		key := aws.ToString(c.Key)
		d.count(key)
		name, ok := strings.CutPrefix(key, d.prefix)
		if !ok {
			continue // not under the directory: a store that lies
		}
		if f.isSidecar(name) {
			continue
		}
		fi := fileInfo{name: name, size: aws.ToInt64(c.Size), key: key, etag: aws.ToString(c.ETag)}
		if c.LastModified != nil {
			// A listing may give milliseconds; HEAD's Last-Modified has
			// whole seconds. Both must describe the object alike.
			fi.mod = c.LastModified.Truncate(time.Second)
		}
		d.addObject(fi)
	}
	tok := aws.ToString(res.NextContinuationToken)
	if !aws.ToBool(res.IsTruncated) || tok == "" {
		d.finish(true)
	} else {
		if d.tokens[tok] {
			return &fs.PathError{Op: "readdir", Path: d.name, Err: fmt.Errorf("%w (%.40q after %d pages)", ErrListLoop, tok, d.pages)}
		}
		d.tokens[tok] = true
		d.bytes += int64(len(tok))
		d.token = aws.String(tok)
		// Keys come sorted: an object whose name+"/" sorts before the
		// last key listed has no prefix of its name.
		for name, fi := range d.held {
			if d.prefix+name+"/" < d.maxKey {
				d.emit(fi)
				delete(d.held, name)
			}
		}
	}
	// A page's prefixes and objects come in two lists; keep the store's
	// key order across both.
	page := d.buf[start:]
	slices.SortStableFunc(page, func(a, b fs.DirEntry) int {
		return strings.Compare(sortKey(a), sortKey(b))
	})
	return nil
}

// count adds a listed key to the listing's size.
func (d *dir) count(key string) {
	d.bytes += int64(len(key)) + entryCost
	if strings.HasPrefix(key, d.prefix) {
		d.maxKey = max(d.maxKey, key)
	}
}

// usable tells whether name can be listed, counting the names too long.
func (d *dir) usable(name string) bool {
	if !validName(name) {
		return false
	}
	if len(name) > MaxNameLen {
		if d.long == 0 {
			d.first = name
		}
		d.long++
		return false
	}
	return true
}

func (d *dir) addDir(name string) {
	if !d.usable(name) || d.seen[name]&seenPrefix != 0 {
		return
	}
	k := d.seen[name]
	d.seen[name] |= seenPrefix
	d.buf = append(d.buf, fs.FileInfoToDirEntry(fileInfo{name: name, dir: true}))
	if fi, ok := d.held[name]; ok {
		delete(d.held, name)
		d.emitTwin(fi)
	} else if k&seenObject != 0 {
		// Listed as an object already (a store that does not sort its
		// keys): the name went to the object.
		d.buf = d.buf[:len(d.buf)-1]
	}
}

func (d *dir) addObject(fi fileInfo) {
	name := fi.name
	if !d.usable(name) || d.seen[name]&seenObject != 0 {
		return // the directory's own marker object, a key fs cannot name, or listed already
	}
	k := d.seen[name]
	d.seen[name] |= seenObject
	if k&seenPrefix != 0 {
		d.emitTwin(fi)
		return
	}
	d.held[name] = fi
}

// emitTwin lists an object whose name a directory has, under its
// ObjectSuffix name.
func (d *dir) emitTwin(fi fileInfo) {
	d.twins[fi.name] = true
	fi.side = d.sides[fi.name]
	fi.name += ObjectSuffix
	if len(fi.name) > MaxNameLen {
		d.usable(fi.name)
		return
	}
	if d.seen[fi.name] != 0 {
		d.taken++
		return
	}
	d.seen[fi.name] = seenObject
	d.buf = append(d.buf, fs.FileInfoToDirEntry(fi))
}

func (d *dir) emit(fi fileInfo) {
	fi.side = d.sides[fi.name]
	d.buf = append(d.buf, fs.FileInfoToDirEntry(fi))
}

// finish ends the listing: objects held back are listed, names left out
// are reported once, and a complete listing tells Open about twins.
func (d *dir) finish(complete bool) {
	d.done = true
	for _, fi := range d.held {
		d.emit(fi)
	}
	d.held = nil
	f := d.fs
	if d.long > 0 {
		f.warnOnce(d.prefix, "long", func(l logrus.FieldLogger) {
			l.WithFields(logrus.Fields{"keys": d.long, "first": truncName(d.first)}).
				Warnf("s3: names longer than %d bytes are left out of the listing", MaxNameLen)
		})
	}
	if d.taken > 0 {
		f.warnOnce(d.prefix, "taken", func(l logrus.FieldLogger) {
			l.WithField("objects", d.taken).
				Warnf("s3: objects that share their name with a prefix cannot be listed as NAME%s: keys have those names", ObjectSuffix)
		})
	}
	if complete {
		f.st.mu.Lock()
		if len(f.st.twins) >= maxRemembered {
			f.st.twins = map[string]map[string]bool{}
		}
		f.st.twins[d.prefix] = d.twins
		f.st.mu.Unlock()
	}
}

// warnOnce logs, once per directory and topic in the FS's life, what log
// says.
func (f *FS) warnOnce(prefix, topic string, log func(logrus.FieldLogger)) {
	k := prefix + "\x00" + topic
	f.st.mu.Lock()
	if len(f.st.warned) >= maxRemembered {
		f.st.warned = map[string]bool{}
	}
	done := f.st.warned[k]
	f.st.warned[k] = true
	f.st.mu.Unlock()
	if !done {
		log(logrus.WithField("prefix", "s3://"+f.bucket+"/"+prefix))
	}
}

// truncName shortens a long name for a log line.
func truncName(s string) string {
	if len(s) <= 60 {
		return s
	}
	return s[:60] + "…"
}

// sortKey is an entry's key relative to its directory (directories end in
// "/", as the store orders them).
func sortKey(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// validName tells whether a key's last segment can be a file name (its
// length aside).
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
	// Of a listed object: its key, ETag and whether its sidecar was listed.
	key, etag string
	side      bool
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) ModTime() time.Time { return fi.mod }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any {
	if fi.key == "" {
		return nil
	}
	return &ListedObject{Key: fi.key, ETag: fi.etag, Sidecar: fi.side}
}
func (fi fileInfo) Mode() fs.FileMode {
	if fi.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
