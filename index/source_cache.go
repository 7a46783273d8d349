package index

import (
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/source"
)

// SourceCacheFile returns the cache file OpenSource uses for one version
// of a source under o.CacheDir, or "" when caching is off.
func SourceCacheFile(o Options, sid source.Identity) string {
	return versionCachePath(o.CacheDir, sid)
}

// ErrSavedTooLarge reports a published table larger than any its source
// could need.
var ErrSavedTooLarge = errors.New("index: saved table too large for its source")

// ImportSource stores what r reads, a saved table published next to a
// source (the bytes of the cache file OpenSource wrote for it, wherever it
// ran), as the cache file of sid, so that OpenSource loads it — if it
// passes every check a saved table must (checksum, version and size of the
// source, options, structure); otherwise OpenSource scans as usual. n is
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
// when caching is off or there is no cache directory. (A local file keeps
// one file a path; another source one a version, so that a published table
// can be imported under the name of the version it was made for.)
func versionCachePath(dir string, sid source.Identity) string {
	return cacheFileIn(dir, "source\x00"+sid.Key+"\x00"+sid.Version)
}
