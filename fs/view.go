package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/recfs/recfs/index"
)

// RecordView shows every record of a source through a function of its
// bytes instead of the bytes themselves: cmd/recfs passes decoders of
// database records (codec/dbdecode) for mount --decode. The tree knows
// nothing of what the function does; it asks the view for sizes and bytes
// as it would ask the source.
type RecordView struct {
	// Name says what the view shows ("batch"), for messages.
	Name string
	// Render appends the view of the raw record rec to dst and returns the
	// result. It must depend on rec alone, must not keep rec, and may be
	// called concurrently.
	Render func(dst, rec []byte) []byte
	// MaxRecord bounds the raw records rendered (0: DefaultViewMaxRecord):
	// sizing or reading a larger one fails with ErrTooLarge (EFBIG).
	MaxRecord int64
}

// DefaultViewMaxRecord is the largest raw record a RecordView renders
// unless its MaxRecord says otherwise.
const DefaultViewMaxRecord = 16 << 20

// Memory of the cache of rendered records, one for the process, shared by
// every view (a directory mount has one a file): the last few renderings,
// within a byte budget (one larger rendering is kept alone).
const (
	viewCacheEntries = 16
	viewCacheBudget  = 32 << 20
)

// viewLargeRecord is the raw size above which records are rendered one
// at a time in the process (largeRender).
const viewLargeRecord = 1 << 20

// largeRender serialises the renderings of large records.
var largeRender sync.Mutex

// renderCache holds the renderings of the records last read through any
// view, most recent first.
type renderCache struct {
	mu      sync.Mutex
	entries []viewEntry
}

// renderings is the process's cache of renderings.
var renderings renderCache

// get returns the cached rendering of record n of vs at generation gen.
func (c *renderCache) get(vs *viewSource, gen uint64, n int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.vs == vs && e.gen == gen && e.n == n {
			return e.text, true
		}
	}
	return nil, false
}

// put caches e, keeping the cache within its entries and budget.
func (c *renderCache) put(e viewEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := len(e.text)
	keep := make([]viewEntry, 1, viewCacheEntries)
	keep[0] = e
	for _, old := range c.entries {
		if len(keep) == viewCacheEntries || total+len(old.text) > viewCacheBudget {
			break
		}
		if old.vs == e.vs && old.gen == e.gen && old.n == e.n {
			continue
		}
		keep = append(keep, old)
		total += len(old.text)
	}
	c.entries = keep
}

// View returns src with each record shown through v: Size is the length
// of the rendering, ReadAt reads it. The sizes of rendered records are
// remembered (8 bytes a record, per generation of a Versioned source) so
// that ls -l and reads agree; the renderings of the last records read are
// cached so that reading one in pieces renders it once. A source that is a
// Follower stays one.
func View(src Source, v RecordView) Source {
	if v.MaxRecord <= 0 {
		v.MaxRecord = DefaultViewMaxRecord
	}
	vs := &viewSource{Source: src, v: v}
	vs.ver, _ = src.(Versioned)
	if fl, ok := src.(Follower); ok {
		return &followingView{viewSource: vs, fl: fl}
	}
	return vs
}

// viewSource is a Source rendered through a RecordView.
type viewSource struct {
	Source
	v   RecordView
	ver Versioned // src, if versioned

	mu    sync.Mutex
	gen   uint64  // the generation sizes belong to
	sizes []int64 // rendered size + 1 per record; 0: not known yet
}

// viewEntry is one cached rendering: record n of vs at generation gen.
type viewEntry struct {
	vs   *viewSource
	gen  uint64
	n    int64
	text []byte
}

// followingView is a viewSource whose source follows its file.
type followingView struct {
	*viewSource
	fl Follower
}

// Follow follows the underlying source.
func (f *followingView) Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error {
	return f.fl.Follow(ctx, interval, changed, onErr)
}

// Unwrap returns the source the view renders.
func (s *viewSource) Unwrap() Source { return s.Source }

func (s *viewSource) generation() uint64 {
	if s.ver == nil {
		return 0
	}
	return s.ver.Generation()
}

// render returns the rendering of record n at generation gen.
func (s *viewSource) render(gen uint64, n int64) ([]byte, error) {
	if s.ver != nil && gen != s.ver.Generation() {
		return nil, fmt.Errorf("fs: %s view of record %d at generation %d: %w", s.v.Name, n, gen, index.ErrChanged)
	}
	if text, ok := renderings.get(s, gen, n); ok {
		return text, nil
	}
	if n < 0 || n >= s.Source.Len() {
		return nil, fmt.Errorf("record %d of %d: %w", n, s.Source.Len(), io.ErrUnexpectedEOF)
	}
	size := s.Source.Size(n)
	if size > s.v.MaxRecord {
		return nil, fmt.Errorf("%s view of a record of %d bytes (limit %d): %w", s.v.Name, size, s.v.MaxRecord, ErrTooLarge)
	}
	if size > viewLargeRecord {
		// Large renderings are made one at a time: a hostile record can
		// render to some twenty times its size.
		largeRender.Lock()
		defer largeRender.Unlock()
		if text, ok := renderings.get(s, gen, n); ok {
			return text, nil // made while this one waited
		}
	}
	raw := make([]byte, size)
	var k int
	var err error
	if s.ver != nil {
		k, err = s.ver.ReadAtGeneration(gen, n, raw, 0)
	} else {
		k, err = s.Source.ReadAt(n, raw, 0)
	}
	if k == len(raw) && err == io.EOF {
		err = nil
	}
	if err == nil && k < len(raw) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	text := s.v.Render(nil, raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetIfNew(gen)
	if gen == s.gen {
		s.setSize(n, int64(len(text)))
		renderings.put(viewEntry{vs: s, gen: gen, n: n, text: text})
	}
	return text, nil
}

// resetIfNew drops the sizes of an older generation (cached renderings
// are found by generation); s.mu held.
func (s *viewSource) resetIfNew(gen uint64) {
	if gen != s.gen && gen == s.generation() {
		s.gen, s.sizes = gen, nil
	}
}

// setSize records the rendered size of record n; s.mu held.
func (s *viewSource) setSize(n, size int64) {
	if n >= int64(len(s.sizes)) {
		grown := make([]int64, max(n+1, int64(len(s.sizes))*2, s.Source.Len()))
		copy(grown, s.sizes)
		s.sizes = grown
	}
	s.sizes[n] = size + 1
}

// SizeErr returns the rendered size of record n, rendering it when it has
// not been yet; Getattr uses it (see recordSize).
func (s *viewSource) SizeErr(n int64) (int64, error) {
	for tries := 0; ; tries++ {
		gen := s.generation()
		s.mu.Lock()
		s.resetIfNew(gen)
		if gen == s.gen && n >= 0 && n < int64(len(s.sizes)) && s.sizes[n] > 0 {
			size := s.sizes[n] - 1
			s.mu.Unlock()
			return size, nil
		}
		s.mu.Unlock()
		text, err := s.render(gen, n)
		if err != nil && tries < 2 && s.generation() != gen {
			continue // the source changed under the read: size the new one
		}
		return int64(len(text)), err
	}
}

// Size returns the rendered size of record n, or 0 if it cannot be
// rendered (SizeErr says why).
func (s *viewSource) Size(n int64) int64 {
	size, _ := s.SizeErr(n)
	return size
}

// ReadAt reads bytes of record n's rendering.
func (s *viewSource) ReadAt(n int64, p []byte, off int64) (int, error) {
	return s.ReadAtGeneration(s.generation(), n, p, off)
}

// ReadAtGeneration reads bytes of record n's rendering at generation gen;
// it fails, as the source does, if the source has moved on.
func (s *viewSource) ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("fs: negative offset")
	}
	text, err := s.render(gen, n)
	if err != nil {
		return 0, err
	}
	if off >= int64(len(text)) {
		return 0, io.EOF
	}
	k := copy(p, text[off:])
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// Generation returns the source's generation (0 for an unversioned one).
func (s *viewSource) Generation() uint64 { return s.generation() }

var (
	_ Versioned = (*viewSource)(nil)
	_ Follower  = (*followingView)(nil)
)

// sizeErrer is a Source whose record sizes can fail to be known, such as a
// View, which must read and render a record to size it.
type sizeErrer interface {
	SizeErr(n int64) (int64, error)
}

// recordSize returns the size of record n of src, with the error of a
// source that can fail to know it.
func recordSize(src Source, n int64) (int64, error) {
	if se, ok := src.(sizeErrer); ok {
		return se.SizeErr(n)
	}
	return src.Size(n), nil
}
