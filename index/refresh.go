package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// errStatic is returned by Refresh and Follow for a table whose source
// cannot tell whether it changed: Build's reader, a source that is not a
// source.Stater.
var errStatic = errors.New("index: the source cannot tell whether it changed (not a source.Stater)")

// Refresh re-examines the source, asking its source.Stater whether the
// version it names now is still the one the table reads. If not, a source
// that is a source.Reopener is reopened: when the new version continues
// the old one (the same local file, grown or rewritten in place), the
// table is brought up to date with it — only the new tail is scanned when
// the file only grew and the format's driver can extend its table, else
// the file is scanned afresh; when it is another file at the same path or
// another version of an object, its table is loaded or built as the
// table's constructor would and published as a new generation, and the old
// version is closed (reads of it still running fail rather than mix
// versions). A source that changed and cannot be reopened fails with
// ErrChanged. It reports whether the table changed. Readers may run
// concurrently; they see the old table until the new one is complete.
func (t *Table) Refresh(ctx context.Context) (changed bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
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

// refreshWith is Refresh with t.mu held. With settle > 0 (following), a
// local file that needs a rebuild (not an append to a leveldb log) and
// changed less than settle ago is left for a later call. A rebuild during
// which the file changed is not published: with settle it is left for a
// later call, without it is tried again, up to rebuildAttempts times, then
// fails with ErrChanged. Another version of an object is replaced whole: it
// needs no settle time, and is always rebuilt, never extended (a new
// version of an object is another object, whose first bytes would have to
// be read again to prove they are the old ones: an entity tag is no
// checksum of a prefix).
func (t *Table) refreshWith(ctx context.Context, settle time.Duration) (changed bool, err error) {
	cur := t.s().src
	st, ok := cur.(source.Stater)
	if !ok {
		return false, errStatic
	}
	id, size, err := st.Stat()
	if err != nil {
		return false, err
	}
	if id == cur.Identity() && size == cur.Size() {
		return false, nil
	}
	ro, ok := cur.(source.Reopener)
	if !ok || t.reload == nil {
		return false, fmt.Errorf("index: %s: %w (%w)", t.path, ErrChanged, source.ErrChanged)
	}
	next, err := ro.Reopen(ctx)
	if err != nil {
		return false, err
	}
	if l, ok := next.(*local.File); ok && sameFile(cur, l) {
		return t.rescanWith(ctx, settle, false, l)
	}
	if fs, ok := next.(source.FileStater); ok && settle > 0 && young(fs.FileStat().Ctime, settle) {
		closeSource(next)
		return false, nil
	}
	return true, t.replace(ctx, cur, next)
}

// sameFile reports whether l is a version of the local file cur is (the
// same device and inode).
func sameFile(cur source.Source, l *local.File) bool {
	c, ok := cur.(*local.File)
	if !ok {
		return false
	}
	a, b := c.FileStat(), l.FileStat()
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// replace publishes the table of next, another file at the table's path or
// another version of its object, as the table's next generation, and lets
// go of cur. For a local file the old descriptor is closed as soon as the
// checks of reads of older snapshots still running end (a later read of
// such a snapshot fails its source check with ErrChanged, as it would for
// the generation that moved), so that a followed directory whose files are
// replaced does not pin them.
func (t *Table) replace(ctx context.Context, cur, next source.Source) error {
	nt, err := t.reload(ctx, next)
	if err != nil {
		closeSource(next)
		return err
	}
	old, ns := t.s(), nt.s()
	ns.gen = old.gen + 1 // another version: every record may differ
	t.cf = nt.cf
	t.swapSnap(old, ns)
	closeSource(cur)
	if ns.fst == nil {
		// An object's new version (a local file's replacement is the
		// caller's to tell, as cat --follow does).
		logrus.WithFields(logrus.Fields{"source": t.path, "records": ns.n, "was": old.n}).Info("index: source replaced; following its new version")
	}
	return nil
}

// rescanLocked brings the table up to date with the local file it has
// open (never another one at its path), with t.mu held.
func (t *Table) rescanLocked(ctx context.Context) (changed bool, err error) {
	src, err := t.current()
	if err != nil {
		return false, err
	}
	return t.rescanWith(ctx, 0, false, src)
}

// scannedLocked makes sure, t.mu held, that the table was made by a scan
// of the file, not loaded from a saved table whose claims are not proven
// yet: an append decides where to write, what to cut and how to frame
// from them.
func (t *Table) scannedLocked(ctx context.Context) error {
	if t.s().proof == nil {
		return nil
	}
	src, err := t.current()
	if err != nil {
		return err
	}
	_, err = t.rescanWith(ctx, 0, true, src)
	return err
}

// rescanWith brings the table up to date with src, the version its local
// file has now, with refreshWith's settle rule; afresh scans the whole
// file even when it did not change.
func (t *Table) rescanWith(ctx context.Context, settle time.Duration, afresh bool, src *local.File) (changed bool, err error) {
	old := t.s()
	start := time.Now()
	id, err := identify(src)
	if err != nil {
		return false, err
	}
	if id == old.id && !afresh {
		return false, nil
	}
	var s *snapshot
	// A table made from an empty file knows no format from its bytes (it
	// guessed, or was told the one its creator meant): what another
	// writer put there since is detected, not read in that format, lest
	// an appender take the other's records for a torn tail and cut them.
	fromEmpty := old.size == 0
	ex, extended := extenderFor(old, id, src, afresh || fromEmpty)
	if extended {
		s, err = ex.extend(ctx, t, interruptible(ctx, src), old, id.size)
	} else {
		if settle > 0 && young(id.ctime, settle) {
			return false, nil
		}
		s, src, id, err = t.rebuildSettled(ctx, src, id, settle, fromEmpty)
		if s == nil && err == nil {
			return false, nil // still moving: the next refresh looks again
		}
	}
	if err != nil {
		return false, fmt.Errorf("index: refresh %s: %w", t.path, err)
	}
	s.id, s.elapsed, s.origin = id, time.Since(start), src.Identity().Key
	t.publishRescan(ctx, old, s, src, extended, afresh)
	return true, nil
}

// extenderFor returns old's table as an extender when src (identified as
// id) is old's file grown by an append, which the table can read on from
// where it stopped; never when whole says to scan the whole file.
func extenderFor(old *snapshot, id identity, src io.ReaderAt, whole bool) (extender, bool) {
	ex, ok := old.tab.(extender)
	if !ok || whole || !id.sameFile(old.id) || id.size <= old.size || !ex.canExtend() {
		return nil, false
	}
	return ex, prefixUnchanged(src, old)
}

// rebuildSettled scans src afresh until a scan ends on the version it
// started on, and returns that snapshot, version and identity. With a
// settle time a file that moved under the scan is left for the next
// refresh (nil snapshot, nil error); without one it is scanned again, up
// to rebuildAttempts times, then ErrChanged.
func (t *Table) rebuildSettled(ctx context.Context, src *local.File, id identity, settle time.Duration, fromEmpty bool) (*snapshot, *local.File, identity, error) {
	for attempt := 1; ; attempt++ {
		s, err := t.rebuild(ctx, src, id.size, fromEmpty)
		if err != nil || stillAt(src) {
			return s, src, id, err
		}
		if settle > 0 {
			return nil, src, id, nil
		}
		if attempt == rebuildAttempts {
			return nil, src, id, fmt.Errorf("%w while it was read", ErrChanged)
		}
		if src, err = src.Now(); err != nil {
			return nil, src, id, err
		}
		if id, err = identify(src); err != nil {
			return nil, src, id, err
		}
	}
}

// publishRescan makes s, the table of src made by a rescan of old's table
// (extended: by reading on from old's end), the current snapshot and
// saves it. A rescan that finds other records than old's moves the
// content generation; afresh, it also drops the saved table they came
// from.
func (t *Table) publishRescan(ctx context.Context, old, s *snapshot, src *local.File, extended, afresh bool) {
	s.setSource(src)
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
	t.swapSnap(old, s)
	if cf := cachePath(t.opt.CacheDir, src.Identity().Key); cf != "" {
		t.save(ctx, cf, s)
	}
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

// current returns the version the table's local file has now, over the
// table's descriptor (t.mu held).
func (t *Table) current() (*local.File, error) {
	l := t.localFile()
	if l == nil {
		return nil, ErrWritableSource
	}
	return l.Now()
}

// prefixUnchanged checks that the bytes the old table covered still start
// the way they did in src (the head checksum over the same range).
func prefixUnchanged(src io.ReaderAt, old *snapshot) bool {
	head, err := rangeCRC(src, 0, min(old.size, identBlock))
	return err == nil && head == old.id.head
}

// young reports whether a change at ctime (nanoseconds) was less than d ago.
func young(ctime int64, d time.Duration) bool {
	return time.Since(time.Unix(0, ctime)) < d
}

// stillAt reports whether the file of src still has the size and times of
// the version src names.
func stillAt(src source.FileStater) bool {
	st, err := src.Fstat()
	if err != nil {
		return false
	}
	was := src.FileStat()
	return st.Size == was.Size && st.Mtime == was.Mtime && st.Ctime == was.Ctime
}
