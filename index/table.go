package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"

	"github.com/recfs/recfs/codec"
)

// Table is the record table of one source file. See the package doc for its
// concurrency promise.
type Table struct {
	path   string                                               // names the source in messages and Info: the path it was opened by, or its Key
	reload func(context.Context, source.Source) (*Table, error) // how the table of another version of the source is made (see Refresh)
	opt    Options

	snap atomic.Pointer[snapshot] // the current immutable view
	mu   sync.Mutex               // serialises Refresh

	writing  atomic.Int32              // appends of ours in progress (see checkSource)
	grown    atomic.Pointer[grownStat] // a stat of the source accepted as a pure append
	newEntry atomic.Pointer[string]    // the directory of a file Create made, until an fsync of it (see syncNewEntry)
	held     atomic.Pointer[func()]    // releases the append lock Create kept for the first append (Options.KeepCreateLock)

	saver    appendSaver // saves the table once appends pause
	cf       string      // the saved table a proven snapshot was loaded from, resaved when it lies (proof.go)
	lifeOnce sync.Once
	life     context.Context // ends with Close (see lifetime)
	endLife  context.CancelFunc
}

// snapshot is one immutable state of a table. Refresh publishes a new one;
// readers load the pointer once per call, so they never see a torn table.
type snapshot struct {
	format  codec.Format
	flavor  string
	size    int64 // source bytes covered
	n       int64 // records
	bytes   int64 // payload bytes
	damage  []codec.Damage
	source  string
	elapsed time.Duration
	id      identity          // source identity when the table was made (zero for Build)
	src     source.Source     // the version of the source the table reads
	fst     source.FileStater // src when it is a local file (checked after every read), else nil
	gen     uint64            // content generation: moves when records may have changed (not on pure appends)
	origin  string            // absolute source path, saved in the cache file (for pruning)
	cached  string            // the cache file this table was loaded from or saved to, if any
	proof   *proof            // for a table loaded from a saved one: how much of it is proven (nil: built by a scan)
	last    *lastBytes        // the file's last bytes, kept by appends for the next one's identity (nil: none)

	tab table // the format's record table (see driver.go)
}

func (t *Table) s() *snapshot { return t.snap.Load() }

// Format returns the table's format.
func (t *Table) Format() codec.Format { return t.s().format }

// Len returns the number of records.
func (t *Table) Len() int64 { return t.s().n }

// Size returns the payload length of record n, or -1 if n is out of range.
func (t *Table) Size(n int64) int64 {
	s := t.s()
	if n < 0 || n >= s.n {
		return -1
	}
	return s.size1(n)
}

// Offset returns the file offset of the first framing byte of record n (its
// first chunk header for leveldb, its block or legacy record for recordio),
// or -1 if n is out of range.
func (t *Table) Offset(n int64) int64 {
	s := t.s()
	if n < 0 || n >= s.n {
		return -1
	}
	return s.tab.offset(n)
}

func (s *snapshot) size1(n int64) int64 { return s.tab.size(n) }

// ReadAt reads bytes [off, off+len(p)) of record n's payload with
// io.ReaderAt semantics, verifying the checksums of what it touches.
// A record whose bytes no longer match their checksum yields an error
// matching codec.ErrCorrupt. A source that changed since the table was
// made (other than by a pure append) yields ErrChanged, never its bytes:
// every read checks, after reading, that the source is still the version
// the table describes (see checkSource).
//
// A table loaded from a saved one proves record n's place before its first
// read (see proof.go). When that finds the saved table wrong, the source is
// scanned afresh and the read is served from the new table if record n
// has the size there that Size gave before (a read of nothing always is:
// it proves n, so that Size(n) after it is the truth); otherwise it fails
// with ErrChanged, and the caller asks Size again.
func (t *Table) ReadAt(n int64, p []byte, off int64) (int, error) {
	return t.ReadAtContext(context.Background(), n, p, off)
}

// ReadAtContext is ReadAt stopping when ctx is done (the caller gave up:
// an interrupted FUSE request). Where a read decompresses a long stream
// (a compressed TFRecord file) it stops within one chunk of output and
// fails with an error matching context.Canceled; elsewhere a read is
// short and runs to its end.
func (t *Table) ReadAtContext(ctx context.Context, n int64, p []byte, off int64) (int, error) {
	return t.readAt(ctx, t.s(), false, n, p, off)
}

// Generation returns the table's content generation. It moves when a
// Refresh finds the source rewritten, truncated or replaced, and stays when
// the source only grew by new records: records of one generation never
// change.
func (t *Table) Generation() uint64 { return t.s().gen }

// ReadAtGeneration is ReadAt for a reader that has seen generation gen: if
// the table has moved on to another generation it fails with ErrChanged
// instead of returning bytes of another version of the record.
func (t *Table) ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error) {
	return t.ReadAtGenerationContext(context.Background(), gen, n, p, off)
}

// ReadAtGenerationContext is ReadAtGeneration stopping when ctx is done,
// as ReadAtContext does.
func (t *Table) ReadAtGenerationContext(ctx context.Context, gen uint64, n int64, p []byte, off int64) (int, error) {
	s := t.s()
	if s.gen != gen {
		return 0, fmt.Errorf("index: record %d: %w (generation %d, now %d)", n, ErrChanged, gen, s.gen)
	}
	return t.readAt(ctx, s, true, n, p, off)
}

// readRetries is how many times a read goes on in the snapshot that
// replaced the one it read (see readAt): a read that found a lie goes on
// in a table scanned afresh, which cannot lie, and one cut short by a
// swap in the table that took its place; a third replacement during one
// read is not waited out.
const readRetries = 2

// readAt reads record n of snapshot s and checks the source afterwards;
// pinned says the reader holds s's generation (ReadAtGeneration: an open
// file). It is the one place a read goes on in another snapshot, by this
// rule. A read of s fails because s stopped being the table's snapshot
// when it found s's saved table lying (errLie: distrust has published a
// table scanned afresh) or when s was replaced while it ran (errSwapped:
// the replacement closed the stored windows it read). Such a read starts
// again, whole, in the table's current snapshot ns, at most readRetries
// times, when
//   - ns has s's generation (the table healed with every record where s
//     had it: see distrust), for any reader, so that it sees neither EINTR
//     nor ErrChanged; or
//   - the read found the lie itself, the reader is not pinned (ReadAt),
//     and record n is in ns with the size it had in the snapshot the read
//     began in (the size Size gave the reader), or p is empty (a read of
//     nothing proves n, so that Size(n) after it is the truth).
//
// Otherwise it fails with ErrChanged (EIO: the reader asks Size or the
// generation again): a pinned reader after a heal that moved records, an
// unpinned one whose record changed size, any reader whose snapshot a
// Refresh or another heal replaced with another generation. A read given
// up (ctx) or cut short by Close fails with context.Canceled (EINTR) and
// is never retried.
func (t *Table) readAt(ctx context.Context, s *snapshot, pinned bool, n int64, p []byte, off int64) (int, error) {
	first := s
	k, err := t.readSnap(ctx, s, n, p, off)
	for range readRetries {
		if ns, ok := t.retryIn(s, first, pinned, err, n, len(p)); ok {
			s = ns
			k, err = t.readSnap(ctx, s, n, p, off)
			continue
		}
		break
	}
	if cerr := t.checkSource(s, true); cerr != nil {
		return 0, fmt.Errorf("index: record %d: %w", n, cerr)
	}
	return k, err
}

// retryIn returns the snapshot a read of record n in s that failed with
// err goes on in, by readAt's rule (first: the snapshot the read began in;
// size: len(p)).
func (t *Table) retryIn(s, first *snapshot, pinned bool, err error, n int64, size int) (*snapshot, bool) {
	lie := errors.Is(err, errLie)
	if !lie && !errors.Is(err, errSwapped) {
		return nil, false
	}
	ns := t.s()
	switch {
	case ns == s:
		return nil, false
	case ns.gen == s.gen:
		return ns, true
	case lie && !pinned && n < ns.n && (size == 0 || ns.size1(n) == first.size1(n)):
		return ns, true
	}
	return nil, false
}

// window returns the part of p that a read at off of a payload of size
// bytes fills, or done with the read's result when nothing is to be read
// (io.ReaderAt semantics: io.EOF past the end, nil for an empty p).
func window(p []byte, off, size int64) (want []byte, done bool, err error) {
	if off >= size {
		if len(p) == 0 {
			return nil, true, nil
		}
		return nil, true, io.EOF
	}
	if rest := size - off; int64(len(p)) > rest {
		return p[:rest], false, nil
	}
	return p, false, nil
}

// readSnap reads record n of snapshot s without checking the source,
// stopping with ctx where the table's reads can (stopper).
func (t *Table) readSnap(ctx context.Context, s *snapshot, n int64, p []byte, off int64) (int, error) {
	if n < 0 || n >= s.n {
		return 0, ErrRange
	}
	if off < 0 {
		return 0, fmt.Errorf("index: record %d: negative offset %d", n, off)
	}
	var k int
	err := t.prove(s, n)
	if err == nil {
		size := s.size1(n)
		want, done, werr := window(p, off, size)
		if done {
			return 0, werr
		}
		if st, ok := s.tab.(stopper); ok && ctx.Done() != nil {
			k, err = st.readAtStopping(ctx, t, s, n, want, off)
		} else {
			k, err = s.tab.readAt(t, s, n, want, off)
		}
	}
	if errors.Is(err, errLie) {
		t.distrust(s, err)
		return 0, fmt.Errorf("index: record %d: %w (%w)", n, ErrChanged, err)
	}
	if errors.Is(err, source.ErrChanged) || errors.Is(err, errSwapped) {
		return 0, fmt.Errorf("index: record %d: %w (%w)", n, ErrChanged, err)
	}
	if err != nil && err != io.EOF {
		return k, fmt.Errorf("index: record %d: %w", n, err)
	}
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// HasTrailer reports whether the source has a grailbio trailer.
func (t *Table) HasTrailer() bool { return t.s().rioT().hasTrl }

// TrailerSize returns the trailer's length, or 0 when there is none.
func (t *Table) TrailerSize() int64 {
	rt := t.s().rioT()
	if !rt.hasTrl {
		return 0
	}
	return rt.trailer.Len
}

// ReadTrailerAt reads bytes of the trailer with io.ReaderAt semantics.
func (t *Table) ReadTrailerAt(p []byte, off int64) (int, error) {
	s := t.s()
	rt := s.rioT()
	if !rt.hasTrl {
		return 0, fmt.Errorf("index: %w: no trailer", os.ErrNotExist)
	}
	size := rt.trailer.Len
	want, done, err := window(p, off, size)
	if done {
		return 0, err
	}
	rd, err := rt.reader(t, s)
	if err != nil {
		return 0, err
	}
	k, err := rd.ReadItem(rt.trailer, want, off)
	if cerr := t.checkSource(s, false); cerr != nil {
		return 0, fmt.Errorf("index: trailer: %w", cerr)
	}
	if err != nil && err != io.EOF {
		return k, fmt.Errorf("index: trailer: %w", err)
	}
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

// Header returns the recordio header entries in file order (nil for leveldb).
func (t *Table) Header() []HeaderEntry { return t.s().rioT().header }

// Damage returns the byte ranges the scan skipped, in offset order.
func (t *Table) Damage() []codec.Damage { return t.s().damage }

// Info summarises the table.
func (t *Table) Info() Info {
	s := t.s()
	trl := int64(-1)
	if rt := s.rioT(); rt.hasTrl {
		trl = rt.trailer.Len
	}
	return Info{Path: t.path, Format: s.format, Flavor: s.flavor, FileSize: s.size, Records: s.n,
		Bytes: s.bytes, Loaded: s.source, BuildTime: s.elapsed, Trailer: trl, CacheFile: s.cached, Facts: factsOf(s.tab)}
}

// Close closes the version of the source the table reads when it is a
// source.Closer (a local file is closed once the checks of reads still
// running on it end).
func (t *Table) Close() error {
	t.saveNow() // what appends left unsaved
	if unlock := t.held.Swap(nil); unlock != nil {
		(*unlock)() // kept by Create for an append that did not come
	}
	t.lifetime()
	t.endLife()
	releaseSaved(t.s())
	return closeSource(t.s().src)
}

// closeSource closes src when it is a source.Closer.
func closeSource(src source.Source) error {
	if c, ok := src.(source.Closer); ok {
		return c.Close()
	}
	return nil
}

// src returns the reader of the source snapshot s describes.
func (t *Table) src(s *snapshot) io.ReaderAt { return s.src }

// setSource makes src the version of the source s reads.
func (s *snapshot) setSource(src source.Source) {
	s.src = src
	s.fst, _ = src.(source.FileStater)
}

// localFile returns the local file the table reads now, or nil when its
// source is not a local file. Appends and repairs need one, not just an
// appendDest: they reopen the very file read-write (writable, through
// /proc/self/fd), check that its path still names it (pathIsFile) and
// probe the database LOCK beside it (guardDBLock), none of which another
// source offers yet. Where only a capability is used (catchUp's Fstat,
// Sync), the code asks for that capability instead.
func (t *Table) localFile() *local.File {
	l, _ := t.s().src.(*local.File)
	return l
}
