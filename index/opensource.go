package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/source"
)

// ErrWritableSource is returned by OpenSource for Options.Writable: tables
// of sources other than local files are read-only.
var ErrWritableSource = errors.New("index: sources other than local files are read-only")

// OpenSource returns the table of a read-only source that is not a local
// file (an object in a store, say; local files go through Open and
// OpenFile, which also append, repair torn tails and follow replacements).
// A table saved for the source's Identity (same Key, same Version, same
// size and end checksums, same options) is loaded when there is one (see
// Options.CacheDir); otherwise the source is scanned once — through a
// mapping when it is a source.Mapper — and its table saved, keyed by the
// Identity's Key.
//
// Reads go through src. A read that src refuses because its bytes changed
// (source.ErrChanged) fails with ErrChanged too. Refresh asks src's
// source.Stater, when it has one, whether the version moved: a source that
// is also a source.Reopener is reopened at its new version and the table
// loaded or built for it (see Refresh); another reports ErrChanged. Close
// closes the source version the table reads when it is a source.Closer.
func OpenSource(ctx context.Context, src source.Source, o Options) (*Table, error) {
	if o.Writable {
		return nil, ErrWritableSource
	}
	start := time.Now()
	sid := src.Identity()
	size := src.Size()
	id, err := identify(src)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", sid.Key, err)
	}
	t := &Table{path: sid.Key, r: src, source: src, opt: o, reload: func(ctx context.Context, src source.Source) (*Table, error) {
		o.Progress = nil
		return OpenSource(ctx, src, o)
	}}
	cf := cachePath(o.CacheDir, sid.Key)
	if cf != "" && !o.Rebuild {
		if s, err := loadCache(ctx, cf, id, o); err == nil && t.loadedFrom(ctx, s, src, cf, true) == nil {
			s.source, s.elapsed = "cached", time.Since(start)
			t.snap.Store(s)
			return t, nil
		}
	}
	var r io.ReaderAt = src
	if mp, ok := src.(source.Mapper); ok {
		if m, err := mp.Map(); err == nil {
			defer m.Close()
			r = m
		}
	}
	s, err := build(ctx, r, size, o)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", sid.Key, err)
	}
	s.id, s.elapsed, s.obj = id, time.Since(start), src
	t.snap.Store(s)
	if cf != "" {
		// A failure to save costs only speed next time; the table is good.
		_ = saveCache(ctx, cf, s, o)
	}
	return t, nil
}

// refreshSource is Refresh for a table of a source that is not a local file
// (OpenSource, BuildSource). It asks the source's Stater whether the
// version moved. A moved source that is a source.Reopener is reopened at
// its new version, whose table is loaded or built as the table's
// constructor would, and published as a new generation; the old version is
// closed, so reads of it still running fail rather than mix versions. Such
// a source is always rebuilt, never extended: a new version of an object is
// another object, whose first bytes would have to be read again to prove
// they are the old ones (an entity tag is no checksum of a prefix), and it
// is replaced whole, so no settle time is needed. A moved source that
// cannot be reopened fails with ErrChanged.
func (t *Table) refreshSource(ctx context.Context) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.source
	st, ok := cur.(source.Stater)
	if !ok {
		return false, nil
	}
	id, size, err := st.Stat()
	if err != nil {
		return false, err
	}
	was := cur.Identity()
	if id == was && size == cur.Size() {
		return false, nil
	}
	ro, ok := cur.(source.Reopener)
	if !ok || t.reload == nil {
		return false, fmt.Errorf("index: %s: %w (%w)", was.Key, ErrChanged, source.ErrChanged)
	}
	src, err := ro.Reopen(ctx)
	if err != nil {
		return false, err
	}
	nt, err := t.reload(ctx, src)
	if err != nil {
		closeSource(src)
		return false, err
	}
	old, ns := t.s(), nt.s()
	ns.gen = old.gen + 1 // another version: every record may differ
	t.rioMu.Lock()
	t.source, t.r = src, src
	t.rioMu.Unlock()
	t.cf = nt.cf
	t.snap.Store(ns)
	closeSource(cur)
	logrus.WithFields(logrus.Fields{"source": was.Key, "records": ns.n, "was": old.n}).Info("index: source replaced; following its new version")
	return true, nil
}

// loadedFrom is loaded for a saved table s of src, a source that is not a
// local file: s reads src.
func (t *Table) loadedFrom(ctx context.Context, s *snapshot, src source.Source, cf string, read bool) error {
	s.obj = src
	return t.loaded(ctx, s, cf, read)
}
