package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"syscall"
	"time"

	"github.com/recfs/recfs/index"
)

// Writing (Options.ReadWrite). A file created in a record directory is a
// pending record: its bytes are buffered (in memory up to Options.MemLimit,
// then in a temporary file) and appended to the source file as ONE record
// through the source's Appender when the file is flushed (close(2)) or
// fsynced. Until its last handle is released the pending file keeps its
// created name for lookups (so that stat, chmod or utimes after the last
// write work), though listings leave it out (grep -r would race with its
// disappearance); afterwards the name is gone and the record is listed
// under its number. Opening it again for reading gives a read-only view
// whose close appends nothing.
//
// After a pending file has been appended, it is sealed: further writes or
// truncations fail with EIO (the record is immutable like every other),
// later flushes do nothing. cp, echo >, tee and dd write and then close,
// so they never hit this; a program that closes a duplicate descriptor
// after writing and then writes more through another one does.

// This file holds the tree's write operations; pending.go the life of a
// pending file and spill.go the buffer that holds its bytes.

// ErrImmutable is returned, in a writable mount, for an attempt to change
// an existing record, the trailer, .recfs or the mirrored tree. It maps to
// EPERM.
var ErrImmutable = errors.New("fs: records are immutable")

// ErrSealed is returned for a write to a pending file whose content has
// already been appended as a record. It maps to EIO.
var ErrSealed = errors.New("fs: record already appended")

// ErrTooLarge is returned for a write beyond Options.MaxRecord. It maps to
// EFBIG.
var ErrTooLarge = errors.New("fs: record too large")

// Appender is implemented by sources that take new records; *index.Table
// is one. Append writes recs at the end of the source file, each as one
// record, and returns the number of the first.
type Appender interface {
	Append(ctx context.Context, recs [][]byte, o index.AppendOptions) (first int64, err error)
}

var _ Appender = (*index.Table)(nil)

// StreamAppender is implemented by sources that append records read from
// streams without holding them in memory; *index.Table is one. Pending
// files that spilled to disk are appended through it.
type StreamAppender interface {
	AppendFrom(ctx context.Context, recs []index.Stream, o index.AppendOptions) (first int64, err error)
}

var _ StreamAppender = (*index.Table)(nil)

// CreateFunc makes f, a new file the tree just created empty (read-write,
// beneath the source root), an empty record file and returns its table.
// Directory trees call it for mkdir in a writable mount. On failure the
// tree removes the file, unless the error matches fs.ErrExist: another
// writer made the file theirs meanwhile, and mkdir fails with EEXIST.
type CreateFunc func(ctx context.Context, f SourceFile) (Records, error)

// Writable reports whether the tree accepts appends.
func (t *Tree) Writable() bool { return t.o.ReadWrite }

// Mutable reports whether n can change while mounted: in a writable tree,
// record directories (they gain records), .recfs and pending files.
// Adapters give such nodes short kernel cache timeouts and no directory
// cache.
func (t *Tree) Mutable(n Node) bool {
	if !t.o.ReadWrite {
		return false
	}
	switch n.Kind {
	case KindRecordDir, KindInfo, KindPending, KindDir:
		return true
	}
	return false
}

// reservedName reports whether name belongs to the record namespace of a
// record directory: its fixed entries and any name made of digits only.
func reservedName(name string) bool {
	if name == InfoName || name == TrailerName {
		return true
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true // digits only: a record name, now or later
}

// maxNameLen is the longest entry name (NAME_MAX).
const maxNameLen = 255

// checkName is the one check of an entry name that Lookup, Create and
// Mkdir make: a single path element, neither "." nor "..", at most 255
// bytes, with no slash or NUL. It returns iofs.ErrInvalid (Lookup turns
// that into ENOENT: no such entry can exist).
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > maxNameLen {
		return iofs.ErrInvalid
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 {
			return iofs.ErrInvalid
		}
	}
	return nil
}

// Create makes a pending record called name in the record directory parent
// and opens it for writing. It needs a writable tree.
func (t *Tree) Create(ctx context.Context, parent Node, name string) (Node, *WriteHandle, error) {
	if !t.o.ReadWrite {
		return Node{}, nil, t.ReadOnly("create", parent)
	}
	if parent.Kind != KindRecordDir {
		return Node{}, nil, t.refuse("create", parent, name)
	}
	src, err := t.records(ctx, parent.rd)
	if err != nil {
		return Node{}, nil, err
	}
	if _, ok := src.(Appender); !ok {
		return Node{}, nil, &OpError{Op: "create", Path: parent.rd.path, Name: joinRel(parent.rd.rel, name), Record: -1, Off: -1, Err: ErrNotSupported}
	}
	if err := appendRefusal(src); err != nil {
		// Say so at open(2), where a shell's "echo >" sees it, not only
		// at close(2).
		return Node{}, nil, &OpError{Op: "create", Path: parent.rd.path, Name: joinRel(parent.rd.rel, name), Record: -1, Off: -1, Err: err}
	}
	if err := checkName(name); err != nil {
		return Node{}, nil, err
	}
	if reservedName(name) {
		return Node{}, nil, t.refuse("create", parent, name)
	}
	rd := parent.rd
	rd.pmu.Lock()
	defer rd.pmu.Unlock()
	if _, ok := rd.pend[name]; ok {
		return Node{}, nil, iofs.ErrExist
	}
	if rd.pend == nil {
		rd.pend = make(map[string]*pending)
	}
	rd.pendSeq++
	p := &pending{t: t, rd: rd, name: name, id: rd.pendSeq, ctim: time.Now(), record: -1, refs: 1, buf: spillBuf{t: t}}
	rd.pend[name] = p
	return p.node(), &WriteHandle{p: p}, nil
}

// appendRefusal reports why src would refuse an append, as far as that is
// known up front: a format recfs only reads (ErrReadOnly wrapping
// index.ErrReadOnlyFormat: EROFS), a closed log or a running database's log
// (the source's CheckAppend).
func appendRefusal(src Records) error {
	c, ok := src.(interface{ CheckAppend() error })
	if !ok {
		return nil
	}
	err := c.CheckAppend()
	if errors.Is(err, index.ErrReadOnlyFormat) {
		err = fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return err
}

// refuse returns the error for a change the tree never makes: EROFS in a
// read-only tree, EPERM in a writable one.
func (t *Tree) refuse(op string, parent Node, name string) error {
	err := t.ReadOnly(op, parent)
	if oe, ok := err.(*OpError); ok && name != "" {
		oe.Name = joinRel(parent.Name(), name)
	}
	return err
}

// OpenWrite opens an existing pending file again (another open(2) of a
// created name before its first handle closed).
func (t *Tree) OpenWrite(ctx context.Context, n Node) (*WriteHandle, error) {
	if n.Kind != KindPending {
		return nil, t.ReadOnly("open for writing", n)
	}
	p, err := t.pendingOf(n)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.refs++
	p.mu.Unlock()
	return &WriteHandle{p: p}, nil
}

// Truncate sets the size of a pending file (O_TRUNC, ftruncate). Other
// nodes are immutable.
func (t *Tree) Truncate(ctx context.Context, n Node, size int64) error {
	if n.Kind != KindPending {
		return t.ReadOnly("truncate", n)
	}
	p, err := t.pendingOf(n)
	if err != nil {
		return err
	}
	return p.truncate(size)
}

// Mkdir creates an empty record file called name in the mirrored directory
// parent (a writable directory tree with Options.Create) and returns its
// record directory.
func (t *Tree) Mkdir(ctx context.Context, parent Node, name string) (Node, error) {
	if !t.o.ReadWrite {
		return Node{}, t.refuse("mkdir", parent, name)
	}
	if parent.Kind != KindDir {
		return Node{}, t.refuse("mkdir", parent, name)
	}
	if t.o.Create == nil {
		return Node{}, ErrNotSupported
	}
	if err := checkName(name); err != nil {
		return Node{}, err
	}
	rel := joinRel(parent.rel, name)
	path := t.abs(rel)
	d, err := t.openDir(parent, false)
	if err != nil {
		return Node{}, err
	}
	defer d.close()
	// O_EXCL|O_NOFOLLOW in the parent's descriptor: nothing that exists
	// there (not even a symbolic link) is opened or replaced.
	f, st, err := d.createAt(name, 0o644)
	if err != nil {
		if errors.Is(err, syscall.EEXIST) {
			return Node{}, iofs.ErrExist
		}
		return Node{}, &OpError{Op: "mkdir", Path: path, Name: rel, Record: -1, Off: -1, Err: err}
	}
	rd := &recDir{path: path, rel: rel, st: st, key: fileKey(st.dev, st.ino), written: true}
	src, err := t.o.Create(context.WithoutCancel(ctx), SourceFile{File: f, Path: path, Reopen: t.reopener(rd)})
	if err == nil {
		// Create synced the new file; its entry in the directory must
		// reach stable storage too before mkdir succeeds.
		if err = syncDir(d); err != nil {
			src.Close()
		}
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			rd.st = statOf(fi)
		} else {
			src.Close()
		}
	}
	if err != nil {
		f.Close()
		if !errors.Is(err, iofs.ErrExist) {
			_ = d.unlinkAt(name, st)
		}
		return Node{}, &OpError{Op: "mkdir", Path: path, Name: rel, Record: -1, Off: -1, Err: err}
	}
	st = rd.st
	rd.src = src
	t.mu.Lock()
	t.files[rel] = &plainEntry{dev: st.dev, ino: st.ino, size: st.size, mtime: st.mtime, rd: rd}
	t.opens = append(t.opens, rd)
	t.mu.Unlock()
	return Node{Kind: KindRecordDir, rd: rd}, nil
}

// syncDir fsyncs d, a directory Mkdir made a file in.
func syncDir(d *dirFD) error {
	if err := d.sync(); err != nil {
		return err
	}
	if dirSyncs != nil {
		dirSyncs(d.path)
	}
	return nil
}

// dirSyncs, when tests set it, is called with the path of each directory
// Mkdir synced.
var dirSyncs func(dir string)

// Unlink removes the entry name of parent. Only a pending file can be
// removed: its content is discarded, never appended (the open handles see
// their later flushes do nothing). Everything else is immutable.
func (t *Tree) Unlink(ctx context.Context, parent Node, name string) error {
	if !t.o.ReadWrite || parent.Kind != KindRecordDir {
		return t.refuse("unlink", parent, name)
	}
	rd := parent.rd
	rd.pmu.Lock()
	p, ok := rd.pend[name]
	if ok {
		delete(rd.pend, name)
	}
	rd.pmu.Unlock()
	if !ok {
		if _, err := t.Lookup(ctx, parent, name); err != nil {
			return err
		}
		return t.refuse("unlink", parent, name)
	}
	p.mu.Lock()
	if !p.sealed {
		p.sealed, p.dirty = true, false
		p.buf.free()
	}
	p.mu.Unlock()
	return nil
}

// Fsync makes n durable: a pending file is appended now (even if empty)
// and the source synced; in a writable tree, a record's source is synced
// (a close may have appended that record without a sync). Other nodes
// never change; Fsync does nothing for them. Adapters whose FSYNC names a
// node, not a handle, use it, and every adapter uses it for records.
func (t *Tree) Fsync(ctx context.Context, n Node) error {
	if n.Kind == KindRecord && t.Writable() {
		return t.syncRecords(ctx, n.rd)
	}
	if n.Kind != KindPending {
		return nil
	}
	p, err := t.pendingOf(n)
	if err != nil {
		return err
	}
	_, err = p.flush(ctx, true, true)
	return err
}

// appendRecord appends p's content to rd's source as one record.
func (t *Tree) appendRecord(ctx context.Context, rd *recDir, p *pending, sync bool) (int64, error) {
	src, err := t.acquire(ctx, rd)
	if err != nil {
		return -1, err
	}
	defer t.release(rd)
	if _, ok := src.(Appender); !ok {
		return -1, p.opErr("append", -1, ErrNotSupported)
	}
	if err := t.checkAppendTarget(rd, src); err != nil {
		return -1, p.opErr("append", -1, err)
	}
	if sa, ok := src.(StreamAppender); ok && p.buf.spilled() {
		// Streamed from the spill file: never whole in memory.
		first, err := sa.AppendFrom(context.WithoutCancel(ctx),
			[]index.Stream{{R: p.buf.reader(), Size: p.buf.size}}, index.AppendOptions{Sync: sync})
		if err != nil {
			return -1, p.opErr("append", -1, err)
		}
		t.appended(rd)
		return first, nil
	}
	if p.buf.spilled() {
		// Its bytes come back into memory for the append: one such
		// record at a time, so the pending memory bound holds.
		t.bigMu.Lock()
		defer t.bigMu.Unlock()
	}
	b, err := p.buf.content()
	if err != nil {
		return -1, p.opErr("append", -1, err)
	}
	first, err := t.commit(ctx, rd, src, b, sync)
	if err != nil {
		return -1, p.opErr("append", -1, err)
	}
	return first, nil
}

// Syncer is implemented by sources that can make what was appended to
// them durable; *index.Table is one.
type Syncer interface {
	Sync() error
}

var _ Syncer = (*index.Table)(nil)

// syncSource makes rd's source durable for p, whose record was appended
// earlier without a sync; fsyncs that arrive together share one sync.
func (t *Tree) syncSource(ctx context.Context, rd *recDir, p *pending) error {
	src, err := t.acquire(ctx, rd)
	if err != nil {
		return err
	}
	defer t.release(rd)
	if _, ok := src.(Syncer); !ok {
		return p.opErr("fsync", -1, ErrNotSupported)
	}
	if err := t.commitSync(ctx, rd, src); err != nil {
		return p.opErr("fsync", -1, err)
	}
	return nil
}

// syncRecords makes rd's source durable for an fsync(2) of one of its
// records, sharing the sync of the batch it joins. A source that is not a
// local file was never appended to through the tree: nothing to sync.
func (t *Tree) syncRecords(ctx context.Context, rd *recDir) error {
	src, err := t.acquire(ctx, rd)
	if err != nil {
		return err
	}
	defer t.release(rd)
	if _, ok := src.(Syncer); !ok {
		return nil
	}
	if err := t.commitSync(ctx, rd, src); err != nil && !errors.Is(err, index.ErrWritableSource) {
		return err
	}
	return nil
}

// checkAppendTarget makes sure, in a directory tree, that the path the
// index appends through (it opens the path for writing) still leads,
// beneath the root and without symbolic links, to the file the source
// reads: a record file swapped for a link is not written through.
func (t *Tree) checkAppendTarget(rd *recDir, src Records) error {
	if t.rootd == nil || rd.rel == "" {
		return nil
	}
	st, err := t.rootd.stat(rd.rel)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStale, err)
	}
	sf, ok := src.(fileStater)
	if !ok {
		return nil
	}
	fi, err := sf.Stat()
	if err != nil {
		return err
	}
	if cur := statOf(fi); st.typ != typeReg || !st.same(cur) {
		return fmt.Errorf("%w: %s is no longer the file being appended to", ErrStale, rd.rel)
	}
	return nil
}

// appended updates what the tree caches about rd after an append.
func (t *Tree) appended(rd *recDir) {
	rd.mu.Lock()
	rd.info = nil
	rd.written = true
	rd.mu.Unlock()
	if rd.rel == "" {
		return
	}
	st, err := t.rootd.stat(rd.rel)
	if err != nil {
		return
	}
	t.mu.Lock()
	if pe := t.files[rd.rel]; pe != nil && pe.rd == rd && pe.dev == st.dev && pe.ino == st.ino {
		pe.size, pe.mtime = st.size, st.mtime
	}
	t.mu.Unlock()
}
