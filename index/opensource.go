package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

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
// source.Stater, when it has one, whether the version moved, and reports
// that as ErrChanged: a new version is read through a new Source. Close
// closes src when it is a source.Closer.
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
	t := &Table{path: sid.Key, r: src, source: src, opt: o}
	cf := cachePath(o.CacheDir, sid.Key)
	if cf != "" && !o.Rebuild {
		if s, err := loadCache(ctx, cf, id, o); err == nil && t.loaded(ctx, s, cf, true) == nil {
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
	s.id, s.elapsed = id, time.Since(start)
	t.snap.Store(s)
	if cf != "" {
		// A failure to save costs only speed next time; the table is good.
		_ = saveCache(ctx, cf, s, o)
	}
	return t, nil
}

// refreshSource is Refresh for a table made by OpenSource.
func (t *Table) refreshSource() (bool, error) {
	st, ok := t.source.(source.Stater)
	if !ok {
		return false, nil
	}
	id, size, err := st.Stat()
	if err != nil {
		return false, err
	}
	if was := t.source.Identity(); id != was || size != t.source.Size() {
		return false, fmt.Errorf("index: %s: %w (%w)", was.Key, ErrChanged, source.ErrChanged)
	}
	return false, nil
}
