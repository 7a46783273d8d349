package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/recfs/recfs/codec/recordio"

	"github.com/recfs/recfs/codec"
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
	AppendFrom(ctx context.Context, recs []recordio.ItemSource, o index.AppendOptions) (first int64, err error)
}

var _ StreamAppender = (*index.Table)(nil)

// CreateFunc makes f, a new file the tree just created empty (read-write,
// beneath the source root), an empty record file and returns its table.
// Directory trees call it for mkdir in a writable mount. On failure the
// tree removes the file.
type CreateFunc func(ctx context.Context, f SourceFile) (Source, error)

// Defaults of the write options.
const (
	DefaultMemLimit   = 8 << 20   // bytes of a pending record kept in memory
	DefaultPendingMem = 64 << 20  // bytes of all pending records of a tree kept in memory
	DefaultMaxRecord  = 256 << 20 // largest record a created file may hold
)

// pending is a file created in a record directory whose content is not yet
// (or just) appended.
type pending struct {
	t    *Tree
	rd   *recDir
	name string
	id   int64
	ctim time.Time

	mu     sync.Mutex
	mem    []byte   // content while it fits in memory
	spill  *os.File // content once it did not
	size   int64
	dirty  bool  // written or truncated since created
	sealed bool  // appended: no more changes
	record int64 // the record it became, once sealed
	err    error // a failed write, truncation or append: reported from then on
	refs   int   // open handles
}

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

// Create makes a pending record called name in the record directory parent
// and opens it for writing. It needs a writable tree.
func (t *Tree) Create(ctx context.Context, parent Node, name string) (Node, *WriteHandle, error) {
	if !t.o.ReadWrite {
		return Node{}, nil, t.ReadOnly("create", parent)
	}
	if parent.Kind != KindRecordDir {
		return Node{}, nil, t.refuse("create", parent, name)
	}
	src, err := t.source(ctx, parent.rd)
	if err != nil {
		return Node{}, nil, err
	}
	if _, ok := src.(Appender); !ok {
		return Node{}, nil, &OpError{Op: "create", Path: parent.rd.path, Name: joinRel(parent.rd.rel, name), Record: -1, Off: -1, Err: ErrNotSupported}
	}
	if f, ok := src.(interface{ Format() codec.Format }); ok && f.Format() == codec.RecordIOLegacy {
		// Legacy recordio is read-only: say so at open(2), as EROFS.
		return Node{}, nil, &OpError{Op: "create", Path: parent.rd.path, Name: joinRel(parent.rd.rel, name), Record: -1, Off: -1,
			Err: fmt.Errorf("%w: %w", ErrReadOnly, index.ErrReadOnlyFormat)}
	}
	if c, ok := src.(interface{ CheckAppend() error }); ok {
		// A closed log or a running database's log: say so at open(2),
		// where a shell's "echo >" sees it, not only at close(2).
		if err := c.CheckAppend(); err != nil {
			return Node{}, nil, &OpError{Op: "create", Path: parent.rd.path, Name: joinRel(parent.rd.rel, name), Record: -1, Off: -1, Err: err}
		}
	}
	if name == "" || name == "." || name == ".." || len(name) > 255 || containsSlash(name) {
		return Node{}, nil, iofs.ErrInvalid
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
	p := &pending{t: t, rd: rd, name: name, id: rd.pendSeq, ctim: time.Now(), record: -1, refs: 1}
	rd.pend[name] = p
	return p.node(), &WriteHandle{p: p}, nil
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == 0 {
			return true
		}
	}
	return false
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

func (p *pending) node() Node {
	return Node{Kind: KindPending, N: p.id, rel: p.name, rd: p.rd}
}

// lookupPending finds a pending file of rd.
func (rd *recDir) lookupPending(name string) (*pending, bool) {
	rd.pmu.Lock()
	defer rd.pmu.Unlock()
	p, ok := rd.pend[name]
	return p, ok
}

// pendingOf returns the pending file n denotes, or ENOENT once it is gone.
func (t *Tree) pendingOf(n Node) (*pending, error) {
	p, ok := n.rd.lookupPending(n.rel)
	if !ok || p.id != n.N {
		return nil, iofs.ErrNotExist
	}
	return p, nil
}

// pendingAttr returns the attributes of a pending file.
func (t *Tree) pendingAttr(n Node) (Attr, error) {
	p, err := t.pendingOf(n)
	if err != nil {
		return Attr{}, err
	}
	a := attrFrom(n.rd.st, makeIno(n.rd.key, inoKindPending, n.N))
	a.Mode = syscall.S_IFREG | 0o644
	p.mu.Lock()
	a.Size = p.size
	p.mu.Unlock()
	a.Atime, a.Mtime, a.Ctime = p.ctim, p.ctim, p.ctim
	return a, nil
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

// openPending opens a pending file for reading only.
func (t *Tree) openPending(ctx context.Context, n Node) (Handle, error) {
	h, err := t.OpenWrite(ctx, n)
	if err != nil {
		return nil, err
	}
	h.ro = true
	return h, nil
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
	if name == "" || name == "." || name == ".." || len(name) > 255 || containsSlash(name) {
		return Node{}, iofs.ErrInvalid
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
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			rd.st = statOf(fi)
		} else {
			src.Close()
		}
	}
	if err != nil {
		f.Close()
		_ = d.unlinkAt(name, st)
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

// WriteHandle is an open pending file. Its methods are safe for concurrent
// use; writes of several handles of one file go to the same content.
type WriteHandle struct {
	p      *pending
	ro     bool // opened for reading: writes fail, flushes do nothing
	closed bool
}

// Node returns the pending file's node.
func (h *WriteHandle) Node() Node { return h.p.node() }

// WriteAt writes b at off of the pending content, growing it (with zeros
// in any gap) as needed.
func (h *WriteHandle) WriteAt(b []byte, off int64) (int, error) {
	p := h.p
	if off < 0 {
		return 0, iofs.ErrInvalid
	}
	if h.ro {
		return 0, syscall.EBADF
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.changeable(); err != nil {
		return 0, err
	}
	end := off + int64(len(b))
	if end > p.t.maxRecord() || end < off {
		return 0, p.fail(p.opErr("write", off, ErrTooLarge))
	}
	if err := p.reserve(end); err != nil {
		return 0, p.fail(p.opErr("write", off, err))
	}
	if p.spill != nil {
		if _, err := p.spill.WriteAt(b, off); err != nil {
			return 0, p.fail(p.opErr("write", off, err))
		}
	} else {
		copy(p.mem[off:end], b)
	}
	p.size = max(p.size, end)
	p.dirty = true
	return len(b), nil
}

// ReadAt reads the pending content.
func (h *WriteHandle) ReadAt(b []byte, off int64) (int, error) {
	p := h.p
	if off < 0 {
		return 0, iofs.ErrInvalid
	}
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return 0, p.err
	}
	if p.sealed {
		// Appended: the buffers are gone, the record has the bytes.
		rec := p.record
		p.mu.Unlock()
		if rec < 0 {
			return 0, io.EOF // discarded
		}
		src, err := p.t.acquire(context.Background(), p.rd)
		if err != nil {
			return 0, err
		}
		defer p.t.release(p.rd)
		return src.ReadAt(rec, b, off)
	}
	defer p.mu.Unlock()
	if off >= p.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.size-off))
	if p.spill != nil {
		if _, err := p.spill.ReadAt(b[:n], off); err != nil && err != io.EOF {
			return 0, p.opErr("read", off, err)
		}
	} else {
		copy(b, p.mem[off:off+int64(n)])
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// Truncate sets the pending content's size.
func (h *WriteHandle) Truncate(size int64) error {
	if h.ro {
		return syscall.EBADF
	}
	return h.p.truncate(size)
}

// Size returns the pending content's size.
func (h *WriteHandle) Size() int64 {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	return h.p.size
}

// Flush appends the pending content as one record if it has been written
// to (or truncated) and not appended yet. It returns the new record's
// number, or -1 when nothing was appended by this call.
//
// A flush before any write does nothing: shells open a file, dup it to
// stdout and close the first descriptor (a FLUSH) before they write. A
// created file closed without any write becomes an empty record when its
// last handle is released (Close), which FUSE does just after close(2)
// returns rather than before.
func (h *WriteHandle) Flush(ctx context.Context) (int64, error) {
	if h.ro {
		return -1, nil
	}
	return h.p.flush(ctx, false, false)
}

// Fsync appends the pending content now (even if empty), durably: the
// source file is synced before it returns.
func (h *WriteHandle) Fsync(ctx context.Context) (int64, error) {
	if h.ro {
		return -1, nil
	}
	return h.p.flush(ctx, true, true)
}

// Close releases the handle. When the last handle of a pending file closes,
// content not appended yet is appended (an empty record for a file never
// written) unless a write failed, then its name disappears and its buffers
// are freed.
func (h *WriteHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	p := h.p
	p.mu.Lock()
	p.refs--
	last := p.refs <= 0
	p.mu.Unlock()
	if !last {
		return nil
	}
	_, err := p.flush(context.Background(), false, true)
	p.rd.pmu.Lock()
	if p.rd.pend[p.name] == p {
		delete(p.rd.pend, p.name)
	}
	p.rd.pmu.Unlock()
	p.mu.Lock()
	p.free()
	p.sealed = true
	p.mu.Unlock()
	return err
}

func (p *pending) changeable() error {
	switch {
	case p.err != nil:
		return p.err
	case p.sealed:
		return p.opErr("write", -1, ErrSealed)
	}
	return nil
}

// fail poisons the pending file after a failed write or truncation: its
// content is no longer what the writer meant, so it is never appended;
// every later write, flush and the release report err. p.mu is held.
func (p *pending) fail(err error) error {
	if p.err == nil {
		p.err = err
		p.free()
	}
	return err
}

func (p *pending) opErr(op string, off int64, err error) error {
	return &OpError{Op: op, Path: p.rd.path, Name: joinRel(p.rd.rel, p.name), Record: -1, Off: off, Err: err}
}

// reserve makes room for size bytes, spilling to a temporary file past the
// file's memory limit or when the tree's pending memory is used up.
func (p *pending) reserve(size int64) error {
	if p.spill != nil {
		return nil
	}
	if size <= p.t.memLimit() {
		if size <= int64(cap(p.mem)) {
			if size > int64(len(p.mem)) {
				p.mem = p.mem[:size]
			}
			return nil
		}
		c := max(size, min(2*int64(cap(p.mem)), p.t.memLimit()), 4096)
		if p.t.takeMem(c - int64(cap(p.mem))) {
			m := make([]byte, size, c)
			copy(m, p.mem)
			p.mem = m
			return nil
		}
	}
	f, err := p.t.spillFile()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(p.mem[:p.size], 0); err != nil {
		f.Close()
		return err
	}
	p.spill = f
	p.dropMem()
	return nil
}

// takeMem takes n bytes of the tree's pending memory, if there are.
func (t *Tree) takeMem(n int64) bool {
	if t.pendMem.Add(n) > t.pendingMem() {
		t.pendMem.Add(-n)
		return false
	}
	return true
}

// dropMem frees the in-memory content and gives its bytes back to the tree.
func (p *pending) dropMem() {
	p.t.pendMem.Add(-int64(cap(p.mem)))
	p.mem = nil
}

// spillFile makes an anonymous temporary file: created with O_EXCL and
// mode 0600 in the tree's private directory (0700, made in TempDir on
// first use) and unlinked at once, so it is gone with its descriptor.
func (t *Tree) spillFile() (*os.File, error) {
	t.spillMu.Lock()
	if t.spillDir == "" {
		d, err := os.MkdirTemp(t.o.TempDir, "recfs-pending-")
		if err != nil {
			t.spillMu.Unlock()
			return nil, err
		}
		t.spillDir = d
	}
	dir := t.spillDir
	t.spillMu.Unlock()
	f, err := os.CreateTemp(dir, "p-")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (p *pending) truncate(size int64) error {
	if size < 0 {
		return iofs.ErrInvalid
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if size == p.size && !p.sealed {
		return nil
	}
	if err := p.changeable(); err != nil {
		return err
	}
	if size > p.t.maxRecord() {
		return p.fail(p.opErr("truncate", size, ErrTooLarge))
	}
	if size > p.size {
		if err := p.reserve(size); err != nil {
			return p.fail(p.opErr("truncate", size, err))
		}
	}
	if p.spill != nil {
		if err := p.spill.Truncate(size); err != nil {
			return p.fail(p.opErr("truncate", size, err))
		}
	} else {
		// Bytes past the length stay zero, so that growing again by
		// reslicing (here or in reserve) shows zeros, not old content.
		clear(p.mem[min(p.size, size):p.size])
		p.mem = p.mem[:size]
	}
	p.size = size
	p.dirty = true
	return nil
}

// content returns the pending bytes as one slice.
func (p *pending) content() ([]byte, error) {
	if p.spill == nil {
		return p.mem[:p.size], nil
	}
	b := make([]byte, p.size)
	if _, err := p.spill.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

func (p *pending) free() {
	if p.spill != nil {
		p.spill.Close()
		p.spill = nil
	}
	p.dropMem()
}

// flush appends the content once: when it was written to, or (force) in
// any case.
func (p *pending) flush(ctx context.Context, sync, force bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return -1, p.err
	}
	if p.sealed || (!p.dirty && !force) {
		return -1, nil
	}
	rec, err := p.t.appendRecord(ctx, p.rd, p, sync)
	if err != nil {
		p.err = err
		return -1, err
	}
	p.sealed, p.dirty, p.record = true, false, rec
	p.free()
	return rec, nil
}

// appendRecord appends p's content to rd's source as one record.
func (t *Tree) appendRecord(ctx context.Context, rd *recDir, p *pending, sync bool) (int64, error) {
	src, err := t.acquire(ctx, rd)
	if err != nil {
		return -1, err
	}
	defer t.release(rd)
	ap, ok := src.(Appender)
	if !ok {
		return -1, p.opErr("append", -1, ErrNotSupported)
	}
	if err := t.checkAppendTarget(rd, src); err != nil {
		return -1, p.opErr("append", -1, err)
	}
	if sa, ok := src.(StreamAppender); ok && p.spill != nil {
		// Streamed from the spill file: never whole in memory.
		first, err := sa.AppendFrom(context.WithoutCancel(ctx),
			[]recordio.ItemSource{{R: io.NewSectionReader(p.spill, 0, p.size), Size: p.size}}, index.AppendOptions{Sync: sync})
		if err != nil {
			return -1, p.opErr("append", -1, err)
		}
		t.appended(rd)
		return first, nil
	}
	if p.spill != nil {
		// Its bytes come back into memory for the append: one such
		// record at a time, so the pending memory bound holds.
		t.bigMu.Lock()
		defer t.bigMu.Unlock()
	}
	b, err := p.content()
	if err != nil {
		return -1, p.opErr("append", -1, err)
	}
	// The append must finish once started: an interrupted close must not
	// leave half a record.
	first, err := ap.Append(context.WithoutCancel(ctx), [][]byte{b}, index.AppendOptions{Sync: sync})
	if err != nil {
		return -1, p.opErr("append", -1, err)
	}
	t.appended(rd)
	return first, nil
}

// checkAppendTarget makes sure, in a directory tree, that the path the
// index appends through (it opens the path for writing) still leads,
// beneath the root and without symbolic links, to the file the source
// reads: a record file swapped for a link is not written through.
func (t *Tree) checkAppendTarget(rd *recDir, src Source) error {
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

func (t *Tree) memLimit() int64 {
	if t.o.MemLimit > 0 {
		return t.o.MemLimit
	}
	return DefaultMemLimit
}

func (t *Tree) pendingMem() int64 {
	if t.o.PendingMem > 0 {
		return t.o.PendingMem
	}
	return DefaultPendingMem
}

func (t *Tree) maxRecord() int64 {
	if t.o.MaxRecord > 0 {
		return t.o.MaxRecord
	}
	return DefaultMaxRecord
}

// String describes a pending file for messages.
func (p *pending) String() string { return fmt.Sprintf("%s/%s", p.rd.path, p.name) }

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
		p.free()
	}
	p.mu.Unlock()
	return nil
}

// Fsync makes n durable: a pending file is appended now (even if empty)
// and the source synced. Other nodes never change; Fsync does nothing for
// them. Adapters whose FSYNC names a node, not a handle, use it.
func (t *Tree) Fsync(ctx context.Context, n Node) error {
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
