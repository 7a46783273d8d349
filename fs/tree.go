package fs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// Kind is the kind of an entry of the tree.
type Kind uint8

// The kinds of entries.
const (
	KindDir        Kind = iota + 1 // a mirrored directory of a tree mount
	KindFile                       // a passed-through regular file of a tree mount
	KindRecordDir                  // a record file shown as a directory
	KindRecord                     // one record
	KindTrailerDir                 // trailer/ of a grailbio file with a trailer
	KindTrailer                    // the trailer item inside trailer/
	KindInfo                       // .recfs
	KindPending                    // a file created in a record directory, not yet released (writable trees)
	KindSummary                    // .recfs-summary: a decoder's summary of the records, not listed
)

// Names of the fixed entries of a record directory. SummaryName is not
// listed (grep -r and find see records only); it exists when the
// records are decoded by a decoder with a summary (see View), and .recfs
// names it.
const (
	InfoName    = ".recfs"
	TrailerName = "trailer"
	SummaryName = ".recfs-summary"
)

// Node identifies one entry of the tree. It is a small value: adapters keep
// it in their kernel-facing node and hand it back on every call, so the tree
// itself keeps nothing per record.
type Node struct {
	Kind Kind
	N    int64   // record number (KindRecord) or trailer item (KindTrailer)
	rel  string  // KindDir, KindFile: slash-separated path below the source root
	rd   *recDir // record kinds: the record file

	dev, ino uint64 // KindDir, KindFile: the identity of what was looked up
}

// IsDir reports whether the node is a directory.
func (n Node) IsDir() bool {
	return n.Kind == KindDir || n.Kind == KindRecordDir || n.Kind == KindTrailerDir
}

// Attr holds the attributes of a node.
type Attr struct {
	Ino                 uint64
	Mode                uint32 // file type and permission bits, as in syscall.Stat_t
	Size                int64
	Nlink               uint32
	UID, GID            uint32
	Atime, Mtime, Ctime time.Time
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name string
	Mode uint32 // file type bits (syscall.S_IFDIR or syscall.S_IFREG)
	Ino  uint64
	Off  uint64 // position after this entry; Seek(Off) continues behind it
}

// Handle is an open file of the tree.
type Handle interface {
	io.ReaderAt
	io.Closer
}

// Xattr is one extended attribute.
type Xattr struct {
	Name  string
	Value []byte
}

// Options configure a Tree. The zero value works for single-file trees.
type Options struct {
	// Open makes the table of a record file of a tree mount, opened by
	// the tree; required by NewDir.
	Open OpenFunc
	// Detect tells record files from other files; required by NewDir.
	Detect DetectFunc
	// EmptyRecord, when set, says an empty file of the given name is a
	// record file of a tree mount (an empty record directory) rather than
	// a plain file: a Kafka segment a broker has just rolled.
	EmptyRecord func(name string) bool
	// HideOther hides files that are not record files in tree mounts.
	HideOther bool
	// Logger receives one line per distinct failure (other than ENOENT).
	// nil: logrus's standard logger.
	Logger logrus.FieldLogger

	// ReadWrite makes the tree writable: files created in record
	// directories are appended as records (see Create), and, with Create
	// set, mkdir in a directory tree makes a new record file. Sources must
	// implement Appender. Without it every change fails with EROFS.
	ReadWrite bool
	// Create makes the record file for mkdir in a writable directory tree.
	Create CreateFunc
	// MemLimit is how many bytes of a pending record stay in memory before
	// they move to a temporary file in TempDir (0: DefaultMemLimit; ""
	// TempDir: os.TempDir). MaxRecord bounds a created record (0:
	// DefaultMaxRecord); larger writes fail with EFBIG.
	MemLimit, MaxRecord int64
	TempDir             string
	// PendingMem bounds the bytes all pending records of the tree keep in
	// memory together (0: DefaultPendingMem); past it, new growth goes to
	// temporary files, created (O_EXCL, 0600, unlinked at once) in a
	// private directory made in TempDir.
	PendingMem int64

	// Owner overrides the owner, group and permissions of every entry
	// (zero value: those of the sources).
	Owner Ownership
}

// statInfo is what the tree keeps of a source file's stat.
type statInfo struct {
	dev, ino            uint64
	uid, gid            uint32
	mode                uint32 // permission bits
	typ                 uint32 // file type: typeDir, typeReg or another
	size                int64
	atime, mtime, ctime time.Time
}

// recDir is one record file: its identity and its lazily opened table.
type recDir struct {
	path string // the source file
	rel  string // its path in the mount ("" when it is the mount root)
	st   statInfo
	key  uint64

	mu   sync.Mutex
	src  Records
	err  error
	info []byte // .recfs, built on first use

	written bool // appended to (or created) through this tree: kept across size changes

	// Lifetime of src in directory trees (see lifetime.go).
	users      int                // open handles, operations on the file and the follow goroutine
	kref       int                // nodes of this file the kernel references
	doomed     bool               // deleted or replaced at its path: closed once users is 0
	stopFollow context.CancelFunc // ends following this file

	pmu     sync.Mutex
	pend    map[string]*pending // writable trees: created files not yet released
	pendSeq int64
	commits commitQueue // closes waiting to append (group.go)
}

// plainEntry caches what a tree mount learned about one regular file.
type plainEntry struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
	rd       *recDir // nil: not a record file
}

// Tree is the file tree of one mount. Its methods are safe for concurrent
// use.
type Tree struct {
	o     Options
	src   string   // the source path, absolute
	rootd *rootDir // directory trees: the open source root every access resolves beneath
	fsys  iofs.FS  // directory trees: the source as a file system (over rootd: see sourcefs.go)

	fsOpen FSOpenFunc // trees over an io/fs.FS (NewFSTree): opens a record file's table
	made   time.Time  // when the tree was made: the time of entries that have none
	root   Node
	elog   *errLog

	mu     sync.Mutex
	files  map[string]*plainEntry // tree mounts: regular files seen so far
	opens  []*recDir              // record files opened, for Close
	follow *following             // non-nil while the tree follows its sources

	pendMem  atomic.Int64 // bytes pending records hold in memory
	spillMu  sync.Mutex   // guards spillDir
	spillDir string       // private directory of spill files, made on first use
	bigMu    sync.Mutex   // one spilled record is read back into memory at a time

	builds     context.Context // the index builds of record files run under it
	stopBuilds context.CancelFunc
}

// NewFile returns the tree of a single record file: the root is the record
// directory of src, the already opened table of the file at path.
func NewFile(path string, src Records, o Options) (*Tree, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	t := newTree(abs, o)
	st := statOf(fi)
	rd := &recDir{path: abs, st: st, key: fileKey(st.dev, st.ino), src: src}
	t.opens = append(t.opens, rd)
	t.root = Node{Kind: KindRecordDir, rd: rd}
	return t, nil
}

// NewDir returns the tree of a directory: every directory is mirrored, every
// record file (as o.Detect says) becomes a record directory opened with
// o.Open on first use, and other regular files are passed through.
func NewDir(path string, o Options) (*Tree, error) {
	if o.Open == nil || o.Detect == nil {
		return nil, fmt.Errorf("fs: NewDir needs Options.Open and Options.Detect")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	rootd, st, err := openRoot(abs)
	if err != nil {
		return nil, err
	}
	if st.typ != typeDir {
		rootd.close()
		return nil, fmt.Errorf("fs: %s is not a directory", abs)
	}
	t := newTree(abs, o)
	t.rootd = rootd
	t.fsys = sourceFS{rootd}
	t.root = Node{Kind: KindDir, dev: st.dev, ino: st.ino}
	return t, nil
}

func newTree(abs string, o Options) *Tree {
	lg := o.Logger
	if lg == nil {
		lg = logrus.StandardLogger()
	}
	builds, stop := context.WithCancel(context.Background())
	return &Tree{o: o, src: abs, elog: &errLog{log: lg}, files: make(map[string]*plainEntry), builds: builds, stopBuilds: stop}
}

// Interrupt ends the index builds of record files in progress, and fails
// those asked for later, with context.Canceled: the requests waiting for
// them return (EINTR) instead of keeping the mount busy. Records already
// indexed are still served. A mount asked to stop calls it before it
// unmounts; Close calls it too.
func (t *Tree) Interrupt() { t.stopBuilds() }

// Root returns the root node.
func (t *Tree) Root() Node { return t.root }

// Origin returns what the tree mirrors: the path or URL it was made from.
func (t *Tree) Origin() string { return t.src }

// Report maps err to an errno with [Errno] and logs it once (with its path,
// record and offset when err carries an [*OpError]) unless it is ENOENT or
// ENODATA.
// Adapters call it for every error they return to the kernel.
func (t *Tree) Report(err error) syscall.Errno { return t.elog.report(err) }

// Close closes every record file the tree opened (and the one given to
// NewFile). The tree must not be used afterwards.
func (t *Tree) Close() error {
	t.Interrupt()
	t.mu.Lock()
	opens := t.opens
	t.opens = nil
	t.mu.Unlock()
	t.spillMu.Lock()
	if t.spillDir != "" {
		os.Remove(t.spillDir) // empty: its files were unlinked when made
		t.spillDir = ""
	}
	t.spillMu.Unlock()
	var first error
	for _, rd := range opens {
		rd.mu.Lock()
		if rd.src != nil {
			if err := rd.src.Close(); err != nil && first == nil {
				first = err
			}
			rd.src = nil
			rd.err = iofs.ErrClosed
		}
		rd.mu.Unlock()
	}
	if t.rootd != nil {
		t.rootd.close()
		t.rootd = nil
	}
	return first
}

// abs returns the source path of a mirrored entry.
func (t *Tree) abs(rel string) string {
	if rel == "" {
		return t.src
	}
	if t.fsOpen != nil {
		return t.fsAbs(rel)
	}
	return filepath.Join(t.src, filepath.FromSlash(rel))
}

// Name returns the node's path relative to the mount root ("" for the
// root), for messages.
func (n Node) Name() string {
	switch n.Kind {
	case KindDir, KindFile:
		return n.rel
	case KindRecordDir:
		return n.rd.rel
	case KindRecord:
		return joinRel(n.rd.rel, fmt.Sprint(n.N))
	case KindTrailerDir:
		return joinRel(n.rd.rel, TrailerName)
	case KindTrailer:
		return joinRel(n.rd.rel, TrailerName+"/"+fmt.Sprint(n.N))
	case KindInfo:
		return joinRel(n.rd.rel, InfoName)
	case KindSummary:
		return joinRel(n.rd.rel, SummaryName)
	case KindPending:
		return joinRel(n.rd.rel, n.rel)
	}
	return ""
}

// ReadOnly returns the error for an attempt to change n by op ("create",
// "write", "mkdir"...): an *OpError wrapping ErrReadOnly (EROFS), or in a
// writable tree ErrImmutable (EPERM), so that Report logs it once.
func (t *Tree) ReadOnly(op string, n Node) error {
	cause := ErrReadOnly
	if t.o.ReadWrite {
		cause = ErrImmutable
	}
	path := t.src
	switch {
	case n.rd != nil:
		path = n.rd.path
	case n.rel != "":
		path = t.abs(n.rel)
	}
	rec := int64(-1)
	if n.Kind == KindRecord {
		rec = n.N
	}
	return &OpError{Op: op, Path: path, Name: n.Name(), Record: rec, Off: -1, Err: cause}
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// records returns the record file's table, opening it on first use. A
// failure is remembered, so a broken file is indexed (and logged) once.
func (t *Tree) records(ctx context.Context, rd *recDir) (Records, error) {
	return t.recordsFor(ctx, rd, false)
}

// acquire is records for a user of the file (an open handle, a read or an
// append): the file stays open until the matching release. A file found
// deleted or replaced takes no new users (ErrStale).
func (t *Tree) acquire(ctx context.Context, rd *recDir) (Records, error) {
	return t.recordsFor(ctx, rd, true)
}

func (t *Tree) recordsFor(ctx context.Context, rd *recDir, use bool) (Records, error) {
	rd.mu.Lock()
	if rd.src != nil || rd.err != nil {
		src, err := rd.src, rd.err
		if use && src != nil {
			if rd.doomed {
				src, err = nil, rd.goneErr()
			} else {
				rd.users++
			}
		}
		rd.mu.Unlock()
		return src, err
	}
	// One request's interruption must not fail the index for everyone;
	// the tree's interruption does.
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(t.builds, cancel)
	src, err := t.openRecordFile(bctx, rd)
	stop()
	cancel()
	if err != nil {
		rd.err = err
		rd.mu.Unlock()
		return nil, err
	}
	rd.src = src
	if use {
		rd.users++
	}
	rd.mu.Unlock()
	t.mu.Lock()
	t.opens = append(t.opens, rd)
	t.mu.Unlock()
	t.followOpened(rd, src)
	return src, nil
}

// openRecordFile opens rd and makes its table.
func (t *Tree) openRecordFile(ctx context.Context, rd *recDir) (Records, error) {
	if t.fsOpen != nil {
		src, err := t.openFSSource(ctx, rd)
		if err != nil {
			return nil, t.indexErr(rd, err)
		}
		return src, nil
	}
	f, err := t.openSource(rd)
	if err != nil {
		return nil, err
	}
	src, err := t.o.Open(ctx, SourceFile{File: f, Path: rd.path, Reopen: t.reopener(rd)})
	if err != nil {
		f.Close()
		return nil, t.indexErr(rd, err)
	}
	return src, nil
}

// indexErr is the error of a record file whose table could not be made.
func (t *Tree) indexErr(rd *recDir, err error) error {
	if _, ok := err.(*OpError); ok {
		return err
	}
	return &OpError{Op: "index", Path: rd.path, Name: rd.rel, Record: -1, Off: -1, Err: err}
}

// Lookup finds the child called name of the directory parent.
func (t *Tree) Lookup(ctx context.Context, parent Node, name string) (Node, error) {
	switch parent.Kind {
	case KindRecordDir:
		src, err := t.records(ctx, parent.rd)
		if err != nil {
			return Node{}, err
		}
		if t.o.ReadWrite {
			if p, ok := parent.rd.lookupPending(name); ok {
				return p.node(), nil
			}
		}
		switch name {
		case InfoName:
			return Node{Kind: KindInfo, rd: parent.rd}, nil
		case SummaryName:
			if v, ok := src.(decodedView); ok && v.hasSummary() {
				return Node{Kind: KindSummary, rd: parent.rd}, nil
			}
		case TrailerName:
			if src.HasTrailer() {
				return Node{Kind: KindTrailerDir, rd: parent.rd}, nil
			}
		}
		if n, ok := ParseRecordName(name, src.Len()); ok {
			return Node{Kind: KindRecord, N: n, rd: parent.rd}, nil
		}
		if n, ok := lookupSeq(src, name); ok {
			return Node{Kind: KindRecord, N: n, rd: parent.rd}, nil
		}
		return Node{}, iofs.ErrNotExist
	case KindTrailerDir:
		if n, ok := ParseRecordName(name, 1); ok {
			return Node{Kind: KindTrailer, N: n, rd: parent.rd}, nil
		}
		return Node{}, iofs.ErrNotExist
	case KindDir:
		if checkName(name) != nil {
			return Node{}, iofs.ErrNotExist
		}
		rel := joinRel(parent.rel, name)
		if t.fsOpen != nil {
			st, err := t.statSource(rel)
			return t.entryNode(rel, st, err)
		}
		// Not through t.fsys: the parent's identity and the name's
		// attributes come from one descriptor.
		d, err := t.openDir(parent, false)
		if err != nil {
			return Node{}, err
		}
		defer d.close()
		st, err := d.statAt(name)
		return t.entryNode(rel, st, err)
	}
	return Node{}, syscall.ENOTDIR
}

// entryNode is the node a lookup of the source entry rel finds, given its
// stat (st, err): the stat's error as a lookup error, an entry the tree
// does not show as ErrNotExist.
func (t *Tree) entryNode(rel string, st statInfo, err error) (Node, error) {
	if err != nil {
		return Node{}, t.srcErr("lookup", rel, err)
	}
	n, ok := t.classify(rel, st)
	if !ok {
		return Node{}, iofs.ErrNotExist
	}
	return n, nil
}

// classify turns the source entry rel (attributes st) into a node. It
// reports false for entries the mount leaves out.
func (t *Tree) classify(rel string, st statInfo) (Node, bool) {
	switch st.typ {
	case typeDir:
		return Node{Kind: KindDir, rel: rel, dev: st.dev, ino: st.ino}, true
	case typeReg:
	default:
		return Node{}, false
	}
	t.mu.Lock()
	pe := t.files[rel]
	t.mu.Unlock()
	if pe != nil && pe.rd != nil && pe.dev == st.dev && pe.ino == st.ino && pe.rd.isWritten() {
		// Appended through this tree: its table is current.
	} else if pe == nil || pe.dev != st.dev || pe.ino != st.ino || pe.size != st.size || !pe.mtime.Equal(st.mtime) {
		pe = &plainEntry{dev: st.dev, ino: st.ino, size: st.size, mtime: st.mtime}
		if t.detect(rel, st) {
			pe.rd = &recDir{path: t.abs(rel), rel: rel, st: st, key: fileKey(st.dev, st.ino)}
		}
		t.mu.Lock()
		t.files[rel] = pe
		t.mu.Unlock()
	}
	if pe.rd != nil {
		return Node{Kind: KindRecordDir, rd: pe.rd}, true
	}
	if t.o.HideOther {
		return Node{}, false
	}
	return Node{Kind: KindFile, rel: rel, dev: st.dev, ino: st.ino}, true
}

// detect reports whether the source entry rel, with attributes st, is a
// record file. Unreadable files are not, nor is a file that is no longer
// the one st describes. An empty file is not either, except in a writable
// tree where an empty ".log" file is an empty leveldb log (what mkdir
// makes), ready for appends.
func (t *Tree) detect(rel string, st statInfo) bool {
	if st.size == 0 {
		return (t.o.ReadWrite && strings.EqualFold(path.Ext(rel), ".log")) || (t.o.EmptyRecord != nil && t.o.EmptyRecord(path.Base(rel)))
	}
	f, fst, err := t.openSourceFile(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	if !fst.same(st) {
		return false
	}
	return t.o.Detect(f, st.size)
}

// openSourceFile opens the regular file rel of the source file system and
// returns it with its attributes as of the open.
func (t *Tree) openSourceFile(rel string) (sourceHandle, statInfo, error) {
	f, err := t.fsys.Open(fsName(rel))
	if err != nil {
		return nil, statInfo{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, statInfo{}, err
	}
	st, ok := t.entryStat(rel, fi)
	if !ok || st.typ != typeReg {
		f.Close()
		return nil, statInfo{}, ErrStale
	}
	h, ok := f.(sourceHandle)
	if !ok {
		f.Close()
		return nil, statInfo{}, ErrNotSupported // the source file system cannot read at offsets
	}
	return h, st, nil
}

// sourceHandle is an open regular file of the source file system.
type sourceHandle interface {
	iofs.File
	io.ReaderAt
}

// statSource returns the attributes of the source entry rel, not
// following a symbolic link.
func (t *Tree) statSource(rel string) (statInfo, error) {
	fi, err := iofs.Stat(t.fsys, fsName(rel))
	if err != nil {
		return statInfo{}, err
	}
	st, ok := t.entryStat(rel, fi)
	if !ok {
		return statInfo{}, ErrNotSupported
	}
	return st, nil
}

// Getattr returns the attributes of n (with Options.Owner applied).
func (t *Tree) Getattr(ctx context.Context, n Node) (Attr, error) {
	a, err := t.getattr(ctx, n)
	if err == nil {
		t.o.Owner.apply(t, n.Kind, &a)
	}
	return a, err
}

// getattr returns the attributes of n as its source has them.
func (t *Tree) getattr(ctx context.Context, n Node) (Attr, error) {
	switch n.Kind {
	case KindDir, KindFile:
		st, err := t.statSource(n.rel)
		if err != nil {
			return Attr{}, t.srcErr("getattr", n.rel, err)
		}
		if !st.sameAs(n) {
			return Attr{}, t.staleErr("getattr", n.rel, st)
		}
		a := attrFrom(st, makeIno(fileKey(st.dev, st.ino), inoKindPlain, 0))
		if n.Kind == KindDir {
			a.Mode, a.Nlink = syscall.S_IFDIR|t.dirPerm(st.mode), 2
		} else {
			a.Mode, a.Size = syscall.S_IFREG|(st.mode&0o555), st.size
		}
		return a, nil
	case KindRecordDir:
		a := attrFrom(n.rd.st, makeIno(n.rd.key, inoKindRecDir, 0))
		a.Mode, a.Nlink = syscall.S_IFDIR|t.recDirPerm(n.rd.st.mode), 2
		return a, nil
	case KindTrailerDir:
		a := attrFrom(n.rd.st, makeIno(n.rd.key, inoKindTrDir, 0))
		a.Mode, a.Nlink = syscall.S_IFDIR|readPerm(n.rd.st.mode)|searchPerm(n.rd.st.mode), 2
		return a, nil
	case KindPending:
		return t.pendingAttr(n)
	}
	src, err := t.records(ctx, n.rd)
	if err != nil {
		return Attr{}, err
	}
	var a Attr
	switch n.Kind {
	case KindRecord:
		if n.N < 0 || n.N >= src.Len() {
			return Attr{}, iofs.ErrNotExist
		}
		a = attrFrom(n.rd.st, makeIno(n.rd.key, inoKindRecord, n.N))
		if a.Size, err = recordSize(ctx, src, n.N); err != nil {
			return Attr{}, &OpError{Op: "getattr", Path: n.rd.path, Name: n.Name(), Record: n.N, Off: -1, Err: err}
		}
	case KindTrailer:
		a = attrFrom(n.rd.st, makeIno(n.rd.key, inoKindTrItem, n.N))
		a.Size = src.TrailerSize()
	case KindInfo:
		a = attrFrom(n.rd.st, makeIno(n.rd.key, inoKindInfo, 0))
		a.Size = int64(len(t.infoText(n.rd, src)))
	case KindSummary:
		text, err := t.summaryText(n, src)
		if err != nil {
			return Attr{}, err
		}
		a = attrFrom(n.rd.st, makeIno(n.rd.key, inoKindSummary, 0))
		a.Size = int64(len(text))
	default:
		return Attr{}, iofs.ErrInvalid
	}
	a.Mode = syscall.S_IFREG | readPerm(n.rd.st.mode)
	return a, nil
}

func attrFrom(st statInfo, ino uint64) Attr {
	return Attr{Ino: ino, Nlink: 1, UID: st.uid, GID: st.gid, Atime: st.atime, Mtime: st.mtime, Ctime: st.ctime}
}

// Open opens a file node for reading. Directories give EISDIR.
func (t *Tree) Open(ctx context.Context, n Node) (Handle, error) {
	switch n.Kind {
	case KindDir, KindRecordDir, KindTrailerDir:
		return nil, syscall.EISDIR
	case KindFile:
		f, st, err := t.openSourceFile(n.rel)
		if err != nil {
			return nil, t.srcErr("open", n.rel, err)
		}
		if !st.sameAs(n) {
			f.Close()
			return nil, t.staleErr("open", n.rel, st)
		}
		return f, nil
	}
	switch n.Kind {
	case KindRecord, KindTrailer:
		src, err := t.acquire(ctx, n.rd)
		if err != nil {
			return nil, err
		}
		u := &user{t: t, rd: n.rd}
		if n.Kind == KindTrailer {
			return &trailerHandle{src: src, rd: n.rd, user: u}, nil
		}
		if n.N < 0 || n.N >= src.Len() {
			u.Close()
			return nil, iofs.ErrNotExist
		}
		h := &recordHandle{src: src, rd: n.rd, n: n.N, user: u}
		if v, ok := src.(Versioned); ok {
			h.ver, h.gen = v, v.Generation()
		}
		return h, nil
	}
	src, err := t.records(ctx, n.rd)
	if err != nil {
		return nil, err
	}
	switch n.Kind {
	case KindInfo:
		return infoHandle(t.infoText(n.rd, src)), nil
	case KindSummary:
		text, err := t.summaryText(n, src)
		if err != nil {
			return nil, err
		}
		return infoHandle(text), nil
	case KindPending:
		return t.openPending(ctx, n)
	}
	return nil, iofs.ErrInvalid
}

// recordHandle reads one record, of the generation it was opened at when
// the source is Versioned.
type recordHandle struct {
	src Records
	rd  *recDir
	n   int64
	*user
	ver Versioned // src, if versioned
	gen uint64    // its generation at open
}

func (h *recordHandle) ReadAt(p []byte, off int64) (int, error) {
	return h.ReadAtContext(context.Background(), p, off)
}

// ReadAtContext is ReadAt stopping when ctx is done, where the source's
// reads can (StoppingRecords).
func (h *recordHandle) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	var (
		n   int
		err error
	)
	sr, stops := h.src.(StoppingRecords)
	stops = stops && ctx.Done() != nil
	switch {
	case h.ver != nil && stops:
		n, err = sr.ReadAtGenerationContext(ctx, h.gen, h.n, p, off)
	case h.ver != nil:
		n, err = h.ver.ReadAtGeneration(h.gen, h.n, p, off)
	case stops:
		n, err = sr.ReadAtContext(ctx, h.n, p, off)
	default:
		n, err = h.src.ReadAt(h.n, p, off)
	}
	if err != nil && err != io.EOF {
		err = &OpError{Op: "read", Path: h.rd.path, Name: joinRel(h.rd.rel, fmt.Sprint(h.n)), Record: h.n, Off: off, Err: err}
	}
	return n, err
}

// trailerHandle reads the trailer.
type trailerHandle struct {
	src Records
	rd  *recDir
	*user
}

func (h *trailerHandle) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.src.ReadTrailerAt(p, off)
	if err != nil && err != io.EOF {
		err = &OpError{Op: "read", Path: h.rd.path, Name: joinRel(h.rd.rel, TrailerName+"/0"), Record: -1, Off: off, Err: err}
	}
	return n, err
}

// infoHandle reads .recfs.
type infoHandle []byte

func (h infoHandle) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, iofs.ErrInvalid
	}
	return bytes.NewReader(h).ReadAt(p, off)
}

func (h infoHandle) Close() error { return nil }

func (rd *recDir) isWritten() bool {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.written
}

// ReadAt reads bytes of the file n at off without an open handle, for
// adapters whose kernel opens files without telling them (FUSE's no-open
// mode): it opens n, reads once and closes it again. A record is read at
// its table's current generation, and its record file is held only for the
// read (as an open handle would hold it), so a source that changed still
// yields an error, never bytes of another version. Pending files, which
// only open handles of a writable tree reach, give EBADF.
func (t *Tree) ReadAt(ctx context.Context, n Node, p []byte, off int64) (int, error) {
	if n.Kind == KindPending {
		return 0, syscall.EBADF
	}
	h, err := t.Open(ctx, n)
	if err != nil {
		return 0, err
	}
	k, err := ReadHandle(ctx, h, p, off)
	if cerr := h.Close(); cerr != nil && (err == nil || err == io.EOF) {
		return k, cerr
	}
	return k, err
}
