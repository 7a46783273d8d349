package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

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

// Memory of the store of renderings made to size records (sizedStore):
// renderings up to viewSizedMax bytes, viewSizedBudget in all, each
// counted with viewSizedOverhead bytes of bookkeeping.
const (
	viewSizedBudget   = 64 << 20
	viewSizedMax      = 64 << 10
	viewSizedOverhead = 96
)

// largeRender serialises the renderings of large records.
var largeRender sync.Mutex

// largeRenderWaits counts the renderings of large records that found
// another one under way and waited for it (a hook for tests).
var largeRenderWaits atomic.Int64

// renderCache holds the renderings of the records last read through any
// view, most recent first.
type renderCache struct {
	mu      sync.Mutex
	entries []viewEntry
}

// renderings is the process's cache of renderings.
var renderings renderCache

// get returns the cached rendering of record n of vs at generation gen.
func (c *renderCache) get(vs *viewRecords, gen uint64, n int64) (viewEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.vs == vs && e.gen == gen && e.n == n {
			return e, true
		}
	}
	return viewEntry{}, false
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

// viewKey names a rendering: record n of vs at generation gen.
type viewKey struct {
	vs  *viewRecords
	gen uint64
	n   int64
}

// sizedStore keeps the renderings made to size records that were not
// read yet. A listing sizes every record of a directory before grep or
// cp reads them in the same order, which the few renderings of
// renderCache cannot serve: the store keeps them, oldest dropped first,
// within its budget, so that a read after a listing renders nothing
// again. A read does not take the rendering out: it ages out like the
// rest.
type sizedStore struct {
	budget int

	mu    sync.Mutex
	m     map[viewKey][]byte
	queue []viewKey // in the order stored, from head on
	head  int
	bytes int // of the renderings held, with their overhead
}

// sized is the process's store of renderings made to size records.
var sized = sizedStore{budget: viewSizedBudget}

// get returns the stored rendering of record k.
func (c *sizedStore) get(k viewKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.m[k]
	return text, ok
}

// put stores text as the rendering of k, dropping the oldest renderings
// beyond the budget.
func (c *sizedStore) put(k viewKey, text []byte) {
	cost := len(text) + viewSizedOverhead
	if cost > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[viewKey][]byte)
	}
	if _, ok := c.m[k]; ok {
		return
	}
	for c.bytes+cost > c.budget {
		old := c.queue[c.head]
		c.queue[c.head] = viewKey{}
		c.head++
		c.bytes -= len(c.m[old]) + viewSizedOverhead
		delete(c.m, old)
	}
	if c.head > 1024 && c.head > len(c.queue)/2 {
		c.queue = append(c.queue[:0], c.queue[c.head:]...)
		c.head = 0
	}
	c.m[k] = text
	c.queue = append(c.queue, k)
	c.bytes += cost
}

// View returns src with each record shown through the decoding session
// s (package codec/decode): Size is the length of the rendering, ReadAt
// reads it. The sizes of rendered records are remembered (8 bytes a
// record, per generation of Versioned records) so that ls -l and reads
// agree; the renderings of the last records read are cached so that
// reading one in pieces renders it once, and small renderings made to
// size records are kept (sizedStore) so that reading a directory after
// listing it renders each record once. A record the decoder does not
// fit fails to size and to read (EIO, logged once). With a nil s the
// records stay as they are. why, if not empty, says in .recfs how the
// decoder (or none) was chosen. When src is a Follower, the view is one.
func View(src Records, s *decode.Session, why string) Records {
	vs := &viewRecords{Records: src, sess: s, why: why}
	vs.ver, _ = src.(Versioned)
	vs.life, vs.end = context.WithCancel(context.Background())
	if fl, ok := src.(Follower); ok {
		return &followingView{viewRecords: vs, fl: fl}
	}
	return vs
}

// viewRecords is Records rendered through a decoding session.
type viewRecords struct {
	Records
	sess *decode.Session // nil: records as they are
	why  string
	ver  Versioned // src, if versioned
	// life is done once the view is closed: the reads of the methods
	// that take no request's context (Size, ReadAt) stop with it.
	life context.Context
	end  context.CancelFunc

	mu    sync.Mutex
	gen   uint64  // the generation sizes belong to
	sizes []int64 // rendered size + 1 per record; 0: not known yet

	sumMu  sync.Mutex
	sumKey [2]uint64 // generation and record count of sum
	sum    []byte    // the last summary made
	sumErr error
}

// viewEntry is one cached rendering: record n of vs at generation gen,
// or why it could not be rendered.
type viewEntry struct {
	vs   *viewRecords
	gen  uint64
	n    int64
	text []byte
	err  error
}

// followingView is a viewRecords whose records follow their file.
type followingView struct {
	*viewRecords
	fl Follower
}

// Follow follows the underlying records.
func (f *followingView) Follow(ctx context.Context, interval time.Duration, changed func(oldLen, newLen int64), onErr func(error)) error {
	return f.fl.Follow(ctx, interval, changed, onErr)
}

// Close stops the reads of renders made with no request's context (Size,
// ReadAt) and closes the source.
func (s *viewRecords) Close() error {
	s.end()
	return s.Records.Close()
}

// Unwrap returns the records the view renders.
func (s *viewRecords) Unwrap() Records { return s.Records }

// decodeInfo returns the lines of .recfs about the view: the decoder and
// how it was chosen.
func (s *viewRecords) decodeInfo() []string {
	name, why := "raw", s.why
	if s.sess != nil {
		name = s.sess.Name()
		if w := s.sess.Why(); w != "" {
			why = w // with what the decoder found out since
		}
	}
	lines := []string{name}
	if why != "" {
		lines[0] += " (" + why + ")"
	}
	if s.sess != nil && s.sess.HasSummary() {
		lines = append(lines, SummaryName+" (not listed; read it by name)")
	}
	return lines
}

// decodedSizes reports whether the view's records are decoded text (their
// sizes are the text's, not the payloads').
func (s *viewRecords) decodedSizes() bool { return s.sess != nil }

// hasSummary reports whether the view's decoder renders a summary.
func (s *viewRecords) hasSummary() bool { return s.sess != nil && s.sess.HasSummary() }

func (s *viewRecords) generation() uint64 {
	if s.ver == nil {
		return 0
	}
	return s.ver.Generation()
}

// atGeneration is a source read at one generation, as the session reads
// it. Reads of record stopN stop with ctx, where the source's reads can
// (StoppingRecords); those of other records (what a stateful decoder
// learns before stopN) run to their end, since a record the session
// failed to read stays unlearned for the generation.
type atGeneration struct {
	s     *viewRecords
	gen   uint64
	ctx   context.Context // nil: no read stops
	stopN int64
}

// stopping returns ctx if it can be done, else nil (reads that never
// stop take the source's plain ReadAt).
func stopping(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return nil
	}
	return ctx
}

func (a atGeneration) Len() int64         { return a.s.Records.Len() }
func (a atGeneration) Size(n int64) int64 { return a.s.Records.Size(n) }
func (a atGeneration) ReadAt(n int64, p []byte, off int64) (int, error) {
	if sr, ok := a.s.Records.(StoppingRecords); ok && a.ctx != nil && n == a.stopN {
		if a.s.ver != nil {
			return sr.ReadAtGenerationContext(a.ctx, a.gen, n, p, off)
		}
		return sr.ReadAtContext(a.ctx, n, p, off)
	}
	if a.s.ver != nil {
		return a.s.ver.ReadAtGeneration(a.gen, n, p, off)
	}
	return a.s.Records.ReadAt(n, p, off)
}

// RecordMeta passes on the metadata of a source whose format keeps it.
func (a atGeneration) RecordMeta(n int64, m *decode.Meta) error {
	if mr, ok := a.s.Records.(decode.MetaReader); ok {
		return mr.RecordMeta(n, m)
	}
	return nil
}

// render returns the rendering of record n at generation gen; forSize
// says it is made to size the record (kept in sized when small). The
// read of the record stops when ctx is done (a nil Done never does): the
// render then fails with the read's error (context.Canceled, EINTR) and
// is not remembered, so the next reader renders the record again.
func (s *viewRecords) render(ctx context.Context, gen uint64, n int64, forSize bool) ([]byte, error) {
	if s.ver != nil && gen != s.ver.Generation() {
		return nil, fmt.Errorf("fs: %s view of record %d at generation %d: %w", s.sess.Name(), n, gen, index.ErrChanged)
	}
	if e, ok := renderings.get(s, gen, n); ok {
		return e.text, e.err
	}
	if text, ok := sized.get(viewKey{s, gen, n}); ok {
		return text, nil
	}
	if n < 0 || n >= s.Records.Len() {
		return nil, fmt.Errorf("record %d of %d: %w", n, s.Records.Len(), io.ErrUnexpectedEOF)
	}
	size := s.Records.Size(n)
	if size > s.sess.MaxRecord() {
		return nil, fmt.Errorf("%s view of a record of %d bytes (limit %d): %w", s.sess.Name(), size, s.sess.MaxRecord(), ErrTooLarge)
	}
	if size > viewLargeRecord {
		// Large renderings are made one at a time: a hostile record can
		// render to some twenty times its size.
		if !largeRender.TryLock() {
			largeRenderWaits.Add(1)
			largeRender.Lock()
		}
		defer largeRender.Unlock()
		if e, ok := renderings.get(s, gen, n); ok {
			return e.text, e.err // made while this one waited
		}
		if err := ctx.Err(); err != nil {
			return nil, err // given up while it waited
		}
	}
	buf := renderBufs.Get().(*[]byte)
	text, err := s.sess.Render((*buf)[:0], atGeneration{s: s, gen: gen, ctx: stopping(ctx), stopN: n}, gen, n)
	if cap(text) <= viewSizedMax {
		*buf = text
		text = slices.Clone(text) // at its size: kept, and read later
	}
	renderBufs.Put(buf)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, index.ErrChanged) || !errors.Is(err, decode.ErrMisfit) && !errors.Is(err, decode.ErrLimit) {
			return nil, err // not the record's fault: not remembered
		}
		text = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetIfNew(gen)
	if gen == s.gen {
		if err == nil {
			s.setSize(n, int64(len(text)))
		}
		if forSize && err == nil && len(text) <= viewSizedMax {
			sized.put(viewKey{s, gen, n}, text)
		} else {
			renderings.put(viewEntry{vs: s, gen: gen, n: n, text: text, err: err})
		}
	}
	return text, err
}

// renderBufs holds buffers renderings are made in before they are
// copied out at their size.
var renderBufs = sync.Pool{New: func() any { return new([]byte) }}

// resetIfNew drops the sizes of an older generation (cached renderings
// are found by generation); s.mu held.
func (s *viewRecords) resetIfNew(gen uint64) {
	if gen != s.gen && gen == s.generation() {
		s.gen, s.sizes = gen, nil
	}
}

// setSize records the rendered size of record n; s.mu held.
func (s *viewRecords) setSize(n, size int64) {
	if n >= int64(len(s.sizes)) {
		grown := make([]int64, max(n+1, int64(len(s.sizes))*2, s.Records.Len()))
		copy(grown, s.sizes)
		s.sizes = grown
	}
	s.sizes[n] = size + 1
}

// SizeErr returns the rendered size of record n, rendering it when it has
// not been yet; Getattr uses it with its request's context (see
// recordSize). The render's read of the record stops when ctx is done
// (where the source's reads can: StoppingRecords): the size then fails
// with the read's error (context.Canceled, EINTR), nothing is remembered,
// and the next call renders the record again.
func (s *viewRecords) SizeErr(ctx context.Context, n int64) (int64, error) {
	if s.sess == nil {
		return recordSize(ctx, s.Records, n)
	}
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
		text, err := s.render(ctx, gen, n, true)
		if err != nil && ctx.Err() == nil && tries < 2 && s.generation() != gen {
			continue // the source changed under the read: size the new one
		}
		return int64(len(text)), err
	}
}

// Size returns the rendered size of record n, or 0 if it cannot be
// rendered (SizeErr says why). With no request's context, a render it
// makes stops when the view is closed (Close); a caller with a request
// uses SizeErr.
func (s *viewRecords) Size(n int64) int64 {
	size, _ := s.SizeErr(s.life, n)
	return size
}

// ReadAt reads bytes of record n's rendering; a render it makes stops
// when the view is closed, as Size's does.
func (s *viewRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	return s.ReadAtGenerationContext(s.life, s.generation(), n, p, off)
}

// ReadAtGeneration reads bytes of record n's rendering at generation gen;
// it fails, as the source does, if the source has moved on. A render it
// makes stops when the view is closed, as Size's does.
func (s *viewRecords) ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error) {
	return s.ReadAtGenerationContext(s.life, gen, n, p, off)
}

// ReadAtContext is ReadAt stopping with ctx: a record not rendered yet is
// read from the source with ctx (StoppingRecords), and a read given up
// fails with context.Canceled (EINTR), never with part of the text.
func (s *viewRecords) ReadAtContext(ctx context.Context, n int64, p []byte, off int64) (int, error) {
	return s.ReadAtGenerationContext(ctx, s.generation(), n, p, off)
}

// ReadAtGenerationContext is ReadAtGeneration stopping with ctx, as
// ReadAtContext does.
func (s *viewRecords) ReadAtGenerationContext(ctx context.Context, gen uint64, n int64, p []byte, off int64) (int, error) {
	if s.sess == nil {
		return atGeneration{s: s, gen: gen, ctx: stopping(ctx), stopN: n}.ReadAt(n, p, off)
	}
	if off < 0 {
		return 0, errors.New("fs: negative offset")
	}
	text, err := s.render(ctx, gen, n, false)
	if err != nil {
		return 0, err
	}
	return bytes.NewReader(text).ReadAt(p, off)
}

// Generation returns the source's generation (0 for an unversioned one).
func (s *viewRecords) Generation() uint64 { return s.generation() }

// summary returns the decoder's summary of every record (the live state
// of a MANIFEST), made again when the source changed or grew; ok is
// false when the decoder has none.
func (s *viewRecords) summary() (text []byte, ok bool, err error) {
	if s.sess == nil || !s.sess.HasSummary() {
		return nil, false, nil
	}
	s.sumMu.Lock()
	defer s.sumMu.Unlock()
	gen := s.generation()
	key := [2]uint64{gen, uint64(s.Records.Len())}
	if s.sum == nil && s.sumErr == nil || key != s.sumKey {
		s.sum, _, s.sumErr = s.sess.Summary(nil, atGeneration{s: s, gen: gen}, gen)
		s.sumKey = key
	}
	return s.sum, true, s.sumErr
}

var (
	_ Versioned       = (*viewRecords)(nil)
	_ StoppingRecords = (*viewRecords)(nil)
	_ Follower        = (*followingView)(nil)
)

// sizeErrer is Records whose record sizes can fail to be known, such as a
// View, which must read and render a record to size it; the read stops
// when ctx is done.
type sizeErrer interface {
	SizeErr(ctx context.Context, n int64) (int64, error)
}

// recordSize returns the size of record n of src, with the error of a
// source that can fail to know it; a source that must read the record to
// size it stops reading when ctx is done.
func recordSize(ctx context.Context, src Records, n int64) (int64, error) {
	if se, ok := src.(sizeErrer); ok {
		return se.SizeErr(ctx, n)
	}
	return src.Size(n), nil
}
