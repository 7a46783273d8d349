package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/recfs/recfs/source"
)

// BuildSource returns the table of a read-only source that is not a local
// file (an object in a store): loaded from the cache directory when a table
// saved for the same Identity (key and version) is there (and, unless the
// version is an entity tag, reads back), else built with Build's scan and saved. The table reads src; a source that
// changes under it fails those reads (source.ErrChanged) rather than serve
// another version's bytes. Refresh and Follow move the table to the
// source's new version when it is a source.Stater and a source.Reopener
// (see Refresh); Close closes the version read then (a source.Closer).
func BuildSource(ctx context.Context, src source.Source, o Options) (*Table, error) {
	start := time.Now()
	sid := src.Identity()
	id := sourceIdent(sid, src.Size())
	t := &Table{path: sid.Key, r: src, source: src, opt: o, reload: func(ctx context.Context, src source.Source) (*Table, error) {
		o.Progress = nil
		return BuildSource(ctx, src, o)
	}}
	cf := versionCachePath(o.CacheDir, sid)
	if cf != "" && !o.Rebuild {
		// An entity tag names the bytes: a table saved for it is used
		// without reading the source. A weaker version (size and time)
		// is checked against the first and last records first.
		if s, err := loadCache(ctx, cf, id, o); err == nil && t.loadedFrom(ctx, s, src, cf, !strongVersion(sid)) == nil {
			s.source, s.elapsed = "cached", time.Since(start)
			t.snap.Store(s)
			return t, nil
		}
	}
	s, err := build(ctx, src, src.Size(), o)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", sid.Key, err)
	}
	// No origin: pruning stats origins as local paths; age and size decide.
	s.id, s.elapsed, s.origin, s.obj = id, time.Since(start), "", src
	t.snap.Store(s)
	if cf != "" {
		_ = saveCache(ctx, cf, s, o) // a failure to save costs only speed next time
	}
	return t, nil
}

// strongVersion tells whether a source version names the content itself
// (an object's entity tag) rather than its size and time.
func strongVersion(sid source.Identity) bool { return strings.HasPrefix(sid.Version, "etag=") }

// sourceIdent is the saved table's identity record of a source version:
// its size and version string. The key is left out so that a saved table
// can be published next to its object and used under any endpoint's name
// for it (ImportSource).
func sourceIdent(sid source.Identity, size int64) identity {
	return identity{size: size, version: sid.Version}
}

// SourceCacheFile returns the cache file BuildSource uses for one version
// of a source under o.CacheDir, or "" when caching is off.
func SourceCacheFile(o Options, sid source.Identity) string {
	return versionCachePath(o.CacheDir, sid)
}

// ErrSavedTooLarge reports a published table larger than any its source
// could need.
var ErrSavedTooLarge = errors.New("index: saved table too large for its source")

// ImportSource stores what r reads, a saved table published next to a
// source (the bytes of the cache file BuildSource wrote for it, wherever it
// ran), as the cache file of sid, so that BuildSource loads it — if it
// passes every check a saved table must (checksum, version and size of the
// source, options, structure); otherwise BuildSource scans as usual. n is
// the length the publisher declared (-1: unknown): a table larger than any
// its source could need is refused before a byte of it is read, and r is
// streamed to the file, never held in memory, and cut past that bound.
func ImportSource(o Options, sid source.Identity, size int64, r io.Reader, n int64) error {
	cf := versionCachePath(o.CacheDir, sid)
	if cf == "" {
		return nil
	}
	bound := cacheFileBound(size)
	if n > bound {
		return fmt.Errorf("%w (%d bytes for a %d-byte source, at most %d)", ErrSavedTooLarge, n, size, bound)
	}
	_, err := writeCacheFileFrom(cf, &cappedReader{r: r, left: bound, want: n})
	return err
}

// cappedReader fails with ErrSavedTooLarge once more than left bytes came,
// and at the end when want (unless -1) were not read.
type cappedReader struct {
	r                io.Reader
	left, read, want int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.read += int64(n)
	switch {
	case c.left < 0:
		return n, ErrSavedTooLarge
	case err == io.EOF && c.want >= 0 && c.read != c.want:
		return n, fmt.Errorf("index: published table of %d bytes, %d declared: %w", c.read, c.want, io.ErrUnexpectedEOF)
	}
	return n, err
}

// versionCachePath is the cache file of one version of a source, or ""
// when caching is off or there is no cache directory. (OpenSource keeps one
// file a key; BuildSource one a version, so that a published table can be
// imported under the name of the version it was made for.)
func versionCachePath(dir string, sid source.Identity) string {
	return cacheFileIn(dir, "source\x00"+sid.Key+"\x00"+sid.Version)
}
