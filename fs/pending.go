package fs

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"sync"
	"syscall"
	"time"
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
	buf    spillBuf // the content
	dirty  bool     // written or truncated since created
	sealed bool     // appended: no more changes
	record int64    // the record it became, once sealed
	err    error    // a failed write, truncation or append: reported from then on
	refs   int      // open handles
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
	a.Size = p.buf.size
	p.mu.Unlock()
	a.Atime, a.Mtime, a.Ctime = p.ctim, p.ctim, p.ctim
	return a, nil
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
	if err := p.buf.writeAt(b, off); err != nil {
		return 0, p.fail(p.opErr("write", off, err))
	}
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
	n, err := p.buf.readAt(b, off)
	if err != nil && err != io.EOF {
		return 0, p.opErr("read", off, err)
	}
	return n, err
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
	return h.p.buf.size
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
	p.buf.free()
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
		p.buf.free()
	}
	return err
}

func (p *pending) opErr(op string, off int64, err error) error {
	return &OpError{Op: op, Path: p.rd.path, Name: joinRel(p.rd.rel, p.name), Record: -1, Off: off, Err: err}
}

func (p *pending) truncate(size int64) error {
	if size < 0 {
		return iofs.ErrInvalid
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if size == p.buf.size && !p.sealed {
		return nil
	}
	if err := p.changeable(); err != nil {
		return err
	}
	if size > p.t.maxRecord() {
		return p.fail(p.opErr("truncate", size, ErrTooLarge))
	}
	if err := p.buf.truncate(size); err != nil {
		return p.fail(p.opErr("truncate", size, err))
	}
	p.dirty = true
	return nil
}

// flush appends the content once: when it was written to, or (force) in
// any case.
func (p *pending) flush(ctx context.Context, sync, force bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return -1, p.err
	}
	if p.sealed && sync && p.record >= 0 {
		// Appended by an earlier flush (a close of a duplicate
		// descriptor) without a sync: fsync(2) still promises it durable.
		return -1, p.t.syncSource(ctx, p.rd, p)
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
	p.buf.free()
	return rec, nil
}

// String describes a pending file for messages.
func (p *pending) String() string { return fmt.Sprintf("%s/%s", p.rd.path, p.name) }
