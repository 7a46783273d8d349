package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"syscall"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/source/local"
)

// errNoFile is returned by Refresh on a table made by Build.
var errNoFile = errors.New("index: refresh needs a table opened from a path")

// Refresh re-examines the source (for a table made by OpenSource or
// BuildSource: see refreshSource): if it grew, only the new tail is scanned
// and the new records are added; if it shrank, was rewritten or was
// replaced by another file at the same path, the table is rebuilt. It
// reports whether the table changed. Readers may run concurrently; they see
// the old table until the new one is complete.
func (t *Table) Refresh(ctx context.Context) (changed bool, err error) {
	if !t.opened && t.source != nil {
		return t.refreshSource(ctx)
	}
	if !t.opened {
		return false, errNoFile
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refreshLocked(ctx)
}

// refreshLocked is Refresh with t.mu held.
func (t *Table) refreshLocked(ctx context.Context) (changed bool, err error) {
	return t.refreshWith(ctx, 0)
}

// settleTime is how long following waits after the last change of a source
// before it rebuilds the table of a rewritten or replaced one: a table
// built from a file halfway through a rewrite would describe records that
// are half of each version, every chunk checksum valid.
const settleTime = 100 * time.Millisecond

// rebuildAttempts bounds the rebuilds Refresh tries while the source keeps
// changing under them.
const rebuildAttempts = 3

// refreshWith is refreshLocked. With settle > 0 (following), a source
// that needs a rebuild (not an append to a leveldb log) and changed less
// than settle ago is left for a later call. A rebuild during which the
// source changed is not published: with settle it is left for a later call,
// without it is tried again, up to rebuildAttempts times, then fails with
// ErrChanged.
func (t *Table) refreshWith(ctx context.Context, settle time.Duration) (changed bool, err error) {
	if fi, err := t.statPath(); err == nil {
		if cur, err := t.file.Stat(); err == nil && !os.SameFile(fi, cur) {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && settle > 0 && young(st.Ctim.Nano(), settle) {
				return false, nil
			}
			return true, t.reopen(ctx)
		}
	}
	return t.rescanWith(ctx, settle, false)
}

// rescanLocked brings the table up to date with the file it has open
// (never another one at its path), with t.mu held.
func (t *Table) rescanLocked(ctx context.Context) (changed bool, err error) {
	return t.rescanWith(ctx, 0, false)
}

// scannedLocked makes sure, t.mu held, that the table was made by a scan
// of the file, not loaded from a saved table whose claims are not proven
// yet: an append decides where to write, what to cut and how to frame
// from them.
func (t *Table) scannedLocked(ctx context.Context) error {
	if t.s().proof == nil {
		return nil
	}
	_, err := t.rescanWith(ctx, 0, true)
	return err
}

// rescanWith is rescanLocked with refreshWith's settle rule; afresh
// scans the whole file even when it did not change.
func (t *Table) rescanWith(ctx context.Context, settle time.Duration, afresh bool) (changed bool, err error) {
	old := t.s()
	start := time.Now()
	done, err := t.hold()
	if err != nil {
		return false, err
	}
	defer done()
	src, id, err := t.current()
	if err != nil {
		return false, err
	}
	if id == old.id && !afresh {
		return false, nil
	}
	var s *snapshot
	extended := false
	// A table made from an empty file knows no format from its bytes (it
	// guessed, or was told the one its creator meant): what another
	// writer put there since is detected, not read in that format, lest
	// an appender take the other's records for a torn tail and cut them.
	fromEmpty := old.size == 0
	if ex, ok := old.tab.(extender); ok && !afresh && !fromEmpty && id.sameFile(old.id) && id.size > old.size && ex.canExtend() && t.prefixUnchanged(old) {
		s, err = ex.extend(ctx, t, interruptible(ctx, src), old, id.size)
		extended = true
	} else {
		if settle > 0 && young(id.ctime, settle) {
			return false, nil
		}
		for attempt := 1; ; attempt++ {
			s, err = t.rebuild(ctx, src, id.size, fromEmpty)
			if err != nil || stillAt(src) {
				break
			}
			if settle > 0 {
				return false, nil
			}
			if attempt == rebuildAttempts {
				err = fmt.Errorf("%w while it was read", ErrChanged)
				break
			}
			if src, id, err = t.current(); err != nil {
				break
			}
		}
	}
	if err != nil {
		return false, fmt.Errorf("index: refresh %s: %w", t.path, err)
	}
	s.id, s.elapsed, s.origin = id, time.Since(start), src.Identity().Key
	s.setSource(src, t.fref)
	s.proof = nil
	if extended {
		s.proof = old.proof.carried() // old's records are s's: what was proven of them holds
	}
	s.gen = old.gen
	if !t.appendedTo(old, s, extended) {
		s.gen++
		if afresh {
			t.dropSaved(old, fmt.Errorf("%w: a scan of the source finds other records", errLie))
		}
	}
	t.snap.Store(s)
	if cf := cachePath(t.opt.CacheDir, src.Identity().Key); cf != "" {
		t.save(ctx, cf, s)
	}
	return true, nil
}

// rebuild scans the file (size bytes) afresh; detect says to detect its
// format even when Options.Format names one, falling back to that one
// when detection fails.
func (t *Table) rebuild(ctx context.Context, src io.ReaderAt, size int64, detect bool) (*snapshot, error) {
	if !detect || t.opt.Format == codec.Unknown {
		return build(ctx, src, size, t.opt)
	}
	o := t.opt
	o.Format = codec.Unknown
	s, err := build(ctx, src, size, o)
	if errors.Is(err, codec.ErrFormat) {
		return build(ctx, src, size, t.opt)
	}
	return s, err
}

// current returns the version the table's file has now, as a local.File
// over the table's descriptor, and its identity (t.mu and a hold taken).
func (t *Table) current() (*local.File, identity, error) {
	src, err := t.fref.src.Now()
	if err != nil {
		return nil, identity{}, err
	}
	id, err := identify(src)
	if err != nil {
		return nil, identity{}, err
	}
	return src, id, nil
}

// prefixUnchanged checks that the bytes the old table covered still start
// the way they did (the head checksum over the same range).
func (t *Table) prefixUnchanged(old *snapshot) bool {
	head, err := rangeCRC(t.fref.src, 0, min(old.size, identBlock))
	return err == nil && head == old.id.head
}

// reopen switches to the file now at the table's path and rebuilds.
func (t *Table) reopen(ctx context.Context) error {
	var (
		f   *os.File
		err error
	)
	if t.opt.Reopen != nil {
		f, err = t.opt.Reopen() // resolved beneath a mount's root; appends reopen it writable by descriptor
	} else {
		f, err = local.OpenPath(t.path, t.opt.Writable, true)
	}
	if err != nil {
		return err
	}
	nt, err := openFile(ctx, f, t.path, t.opt)
	if err != nil {
		f.Close()
		return err
	}
	oldRef := t.fref
	t.rioMu.Lock()
	t.file, t.fref = f, nt.fref
	t.rioMu.Unlock()
	t.cf = nt.cf
	ns := nt.s()
	ns.gen = t.s().gen + 1 // another file: every record may differ
	t.snap.Store(ns)
	// The old file is deleted or renamed away: let go of it now, not when
	// the garbage collector gets to it, so that a followed directory whose
	// files are replaced does not pin them. It is closed as soon as the
	// reads of older snapshots still running end; a later read of such a
	// snapshot fails its source check with ErrChanged, as it would for the
	// generation that moved.
	_ = oldRef.release()
	return nil
}

// canExtend reports whether a grown log can be taken in by scanning its new
// tail only: not when the meaning of new chunks depends on old ones
// (recyclable and WAL-sync logs) or the log was closed.
func (ot *logTable) canExtend() bool {
	return !ot.info.Recyclable && !ot.info.WALSync && ot.info.EOFMarker < 0
}

// extend scans only the tail of a grown leveldb log. Scanning restarts
// at the block holding the end of the last good record: records before it
// are kept, damage found before it is kept, and everything from it on is
// scanned afresh (a record that was still being written is found whole).
func (ot *logTable) extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	resume := ot.resume
	start := resume / blockSize * blockSize
	sc := leveldb.NewScanner(src, size, leveldb.Options{Strict: t.opt.Strict, Unmasked: t.opt.Unmasked,
		Start: start, End: size})
	s := *old
	s.size = size
	lt := *ot
	lt.locs = ot.locs.grown()
	s.tab = &lt
	cloned := false
	for sc.Next() {
		rec := sc.Record()
		if rec.Off < resume {
			continue
		}
		if rec.Chunks != nil || rec.Hdr != lt.hdr || rec.Len >= lenInSide {
			if !cloned {
				lt.side, cloned = maps.Clone(ot.side), true
			}
		}
		lt.add(rec)
		s.n++
		s.bytes += rec.Len
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	res := leveldb.Continue(leveldb.ParallelResult{Damage: old.damage, Info: ot.info}, resume, sc)
	info := res.Info
	s.damage = res.Damage
	lt.info = info
	lt.resume = lt.lastEnd()
	if s.n == old.n {
		lt.resume = max(lt.resume, ot.resume)
	}
	s.flavor = logFlavor(info)
	s.source = "built"
	return &s, nil
}

// young reports whether a change at ctime (nanoseconds) was less than d ago.
func young(ctime int64, d time.Duration) bool {
	return time.Since(time.Unix(0, ctime)) < d
}

// stillAt reports whether the file of src still has the size and times of
// the version src names.
func stillAt(src *local.File) bool {
	st, err := src.Fstat()
	if err != nil {
		return false
	}
	was := src.FileStat()
	return st.Size == was.Size && st.Mtime == was.Mtime && st.Ctime == was.Ctime
}
