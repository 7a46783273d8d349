package tfrecord

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"

	"github.com/recfs/recfs/codec"
)

// A SpanCache keeps decompressed bytes for Inflated readers under a byte
// budget it shares with other decoders (recordio.BlockCache implements
// it). Values are keyed by an owner, one per reader, so that the bytes of
// one file (or version of a file) are never served for another.
type SpanCache interface {
	NewOwner() uint64
	Get(owner uint64, off int64) ([]byte, bool)
	Put(owner uint64, off int64, b []byte)
}

// InflatedOptions configure an Inflated.
type InflatedOptions struct {
	// Cache keeps verified decompressed units for every reader of the
	// Inflated; nil gives the Inflated a small one of its own.
	Cache SpanCache
	// Done, when closed, stops decompression in progress: reads then fail
	// with an error matching ErrStopped.
	Done <-chan struct{}
}

// ErrStopped reports a read whose decompression was stopped (see
// InflatedOptions.Done).
var ErrStopped = errStopped

// An Inflated is an io.ReaderAt over the decompressed stream of a GZIP or
// ZLIB TFRecord file, so that a Scanner and ReadRecord work on it
// unchanged. A read decompresses from the checkpoint at or before its
// offset (see SeekIndex), never from the start of the file, and serves
// bytes only once the unit they belong to has matched its checksum: a
// checkpoint that does not fit the file gives an error wrapping
// codec.ErrCorrupt, never other bytes. Verified units are kept in the
// SpanCache. It is safe for concurrent use: reads of different spans
// decompress in parallel; reads of the same span wait for the first.
type Inflated struct {
	src     io.ReaderAt
	size    int64
	x       *SeekIndex
	o       InflatedOptions
	owner   uint64
	locks   [16]sync.Mutex // by span
	decoded atomic.Int64
	pool    sync.Pool // of *reader
}

// reader is one decompressor of an Inflated with its window buffer.
type reader struct {
	d   *zdecoder
	win []byte
	wfr io.ReadCloser // inflates windows
}

// NewInflated returns an Inflated over the first size bytes of r, which x
// indexes.
func NewInflated(r io.ReaderAt, size int64, x *SeekIndex, o InflatedOptions) (*Inflated, error) {
	if x == nil || (x.Comp != Gzip && x.Comp != Zlib) || len(x.Points) == 0 {
		return nil, fmt.Errorf("%w: no checkpoints of a compressed stream", codec.ErrUnsupported)
	}
	if o.Cache == nil {
		o.Cache = newSmallCache()
	}
	z := &Inflated{src: r, size: size, x: x, o: o}
	z.owner = o.Cache.NewOwner()
	return z, nil
}

// Size returns the decompressed size.
func (z *Inflated) Size() int64 { return z.x.Size }

// Decompressed returns how many bytes reads have decompressed so far
// (bytes served from the cache are not counted).
func (z *Inflated) Decompressed() int64 { return z.decoded.Load() }

// ReadAt reads decompressed bytes [off, off+len(p)).
func (z *Inflated) ReadAt(p []byte, off int64) (int, error) { return z.readAt(p, off, nil) }

// Stopping returns an io.ReaderAt of z's decompressed bytes whose reads
// also stop, failing with an error matching ErrStopped, when done closes
// (one read's cancellation: an interrupted FUSE request), besides when
// InflatedOptions.Done does. A stopped read decompresses at most one more
// chunk of output (32 KiB) after done closes; the decompressor it used
// goes back to the pool, and the units it verified stay in the cache.
func (z *Inflated) Stopping(done <-chan struct{}) io.ReaderAt {
	if done == nil {
		return z
	}
	return stopping{z, done}
}

// stopping is Inflated.Stopping's reader.
type stopping struct {
	z    *Inflated
	done <-chan struct{}
}

func (s stopping) ReadAt(p []byte, off int64) (int, error) { return s.z.readAt(p, off, s.done) }

// readAt is ReadAt stopping also when done closes (nil: never).
func (z *Inflated) readAt(p []byte, off int64, done <-chan struct{}) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("tfrecord: read at negative offset %d", off)
	}
	if off >= z.x.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), z.x.Size)
	pos := off
	for pos < end {
		if k := z.cached(p[pos-off:end-off], pos); k > 0 {
			pos += int64(k)
			continue
		}
		k, err := z.decode(pos, p[pos-off:end-off], done)
		pos += int64(k)
		if err != nil {
			return int(pos - off), err
		}
	}
	if n := int(end - off); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

// unit returns the span and the bounds of the unit holding offset pos.
func (z *Inflated) unit(pos int64) (span int, start, end int64) {
	i := z.x.span(pos)
	cp := &z.x.Points[i]
	start = cp.Out + (pos-cp.Out)>>cp.Unit<<cp.Unit
	return i, start, min(start+1<<cp.Unit, z.x.spanEnd(i))
}

// cached copies into dst what the cache holds from pos on (stopping at
// the first unit it lacks) and returns how much.
func (z *Inflated) cached(dst []byte, pos int64) int {
	n := 0
	for n < len(dst) {
		_, start, end := z.unit(pos)
		b, ok := z.o.Cache.Get(z.owner, start)
		if !ok || int64(len(b)) != end-start {
			break
		}
		k := copy(dst[n:], b[pos-start:])
		n += k
		pos += int64(k)
	}
	return n
}

// decode decompresses from the checkpoint of pos's span (or from a
// paused decoder between it and pos) through the end of the unit holding
// pos+len(dst)-1, copies bytes [pos, pos+len(dst)) into dst and returns how
// many it copied.
func (z *Inflated) decode(pos int64, dst []byte, done <-chan struct{}) (int, error) {
	i, _, _ := z.unit(pos)
	mu := &z.locks[i%len(z.locks)]
	mu.Lock()
	defer mu.Unlock()
	if k := z.cached(dst, pos); k > 0 {
		return k, nil // another reader decoded it meanwhile
	}
	k, err := z.fill(i, pos, dst, true, done)
	if err == errShort {
		k, err = z.fill(i, pos, dst, false, done)
	}
	return k, err
}

// errShort is fill's report that the compressed bytes it read into memory
// for a decoder were too few: it is asked again to stream them.
var errShort = errors.New("compressed bytes read ahead ran out")

// fill is decode for span i, its decoder reading the compressed bytes it
// needs into memory first when buffered.
func (z *Inflated) fill(i int, pos int64, dst []byte, buffered bool, done <-chan struct{}) (int, error) {
	v := verifier{z: z, dst: dst, dstOff: pos, want: pos + int64(len(dst))}
	need := z.x.spanEnd(z.x.span(v.want - 1))
	c := takeCursor(z, z.x.Points[i].Out, pos, need)
	fresh := c == nil
	if fresh {
		r, _ := z.pool.Get().(*reader)
		if r == nil {
			r = &reader{d: newZDecoder(z.src, z.size, z.x.Comp), win: make([]byte, windowSize), wfr: flate.NewReader(nil)}
			r.d.decoded = &z.decoded
		}
		r.d.src, r.d.done = z.src, z.o.Done
		c = &cursor{z: z, r: r, span: i, pos: z.x.Points[i].Out, from: i}
	}
	// This read's own stop, for the start too (its compressed bytes are
	// read ahead then); cleared before c is kept or pooled.
	c.r.d.done2 = done
	if fresh {
		if err := z.startAt(c, i, v.want, buffered); err != nil {
			c.r.d.done2 = nil
			z.pool.Put(c.r)
			if errors.Is(err, errStopped) {
				err = fmt.Errorf("tfrecord: %w at decompressed offset %d (the read wanted %d)", errStopped, z.x.Points[i].Out, v.want)
			}
			return 0, err
		}
	}
	v.span = c.span
	v.begin(c.pos)
	rest, err := v.feed(c.rest)
	for err == nil && !v.done() {
		var b []byte
		b, err = c.r.d.next()
		switch {
		case (err == io.EOF || err == errGap) && c.r.d.short():
			err = errShort
		case err == io.EOF || err == errGap:
			// The stream goes on only at a member the pass found after
			// damage: a checkpoint where the output stopped.
			j := z.resumeAt(c.from, c.r.d.out)
			if j == 0 {
				err = z.mismatch(v.span, fmt.Sprintf("the stream ends at decompressed offset %d, the index says %d", c.r.d.out, z.x.Size))
				break
			}
			c.from = j
			err = z.startAt(c, j, v.want, buffered)
		case errors.Is(err, errStopped):
			err = fmt.Errorf("tfrecord: %w at decompressed offset %d (the read wanted %d)", errStopped, c.r.d.out, v.want)
		case err != nil:
			err = z.readErr(err)
		default:
			rest, err = v.feed(b)
		}
	}
	c.r.d.done2 = nil
	if err != nil || v.pos >= z.x.Size {
		z.pool.Put(c.r)
		return v.copied, err
	}
	c.span, c.pos, c.rest = v.span, v.pos, append(c.rest[:0], rest...)
	putCursor(c)
	return v.copied, nil
}

// readAhead is how many checkpoints past the span a read ends in its
// decoder reads compressed bytes into memory for, and maxReadAhead the
// most bytes it reads so (beyond, it streams them).
const (
	readAhead    = 1
	maxReadAhead = 64 << 20
)

// readAheadChunk is how many compressed bytes a read's decoder reads into
// memory at a time, looking at its done channels between chunks.
const readAheadChunk = 1 << 20

// startAt starts c's decoder at checkpoint i for a read ending at want.
// When buffered, the compressed bytes through readAhead checkpoints past
// want's span are read into memory first (the flate decoder reads a
// bytes.Reader fastest), which bounds how far the decoder may go
// (c.safe).
func (z *Inflated) startAt(c *cursor, i int, want int64, buffered bool) error {
	cp := &z.x.Points[i]
	r := c.r
	r.d.end, c.safe = 0, z.x.Size
	if buffered {
		end := z.size
		if j := z.x.span(max(want, 1)-1) + 1 + readAhead; j < len(z.x.Points) {
			end, c.safe = min(z.x.Points[j].In/8+1024, z.size), z.x.Points[j].Out
		}
		if end-cp.In/8 <= maxReadAhead {
			r.d.end = end
		} else {
			c.safe = z.x.Size
		}
	}
	var win []byte
	if !cp.Member {
		var err error
		if win, err = unpackWindow(cp, r.win, r.wfr); err != nil {
			if re := (*WindowReadError)(nil); errors.As(err, &re) || errors.Is(err, ErrStoredWindow) {
				return fmt.Errorf("%w (the checkpoint at compressed bit %d)", err, cp.In)
			}
			return z.mismatch(i, err.Error())
		}
	}
	if err := r.d.start(cp, win, nil); err != nil {
		if errors.Is(err, errGap) {
			return z.mismatch(i, "no member header at the checkpoint")
		}
		return z.readErr(err)
	}
	return nil
}

// resumeAt returns the checkpoint after checkpoint i (where a decoder
// started) where it goes on after stopping at decompressed offset out: a
// member starting there, 0 if none.
func (z *Inflated) resumeAt(i int, out int64) int {
	for j := i + 1; j < len(z.x.Points) && z.x.Points[j].Out <= out; j++ {
		if z.x.Points[j].Out == out && z.x.Points[j].Member {
			return j
		}
	}
	return 0
}

// readErr passes on a source's error, or stopped decompression.
func (z *Inflated) readErr(err error) error {
	if errors.Is(err, errStopped) {
		return fmt.Errorf("tfrecord: %w", errStopped)
	}
	return err
}

// mismatch is the error of a span that does not decompress as the index
// says.
func (z *Inflated) mismatch(i int, why string) error {
	cp := &z.x.Points[i]
	return corrupt(cp.Out, fmt.Sprintf("%s stream does not match its index at the checkpoint at compressed bit %d: %s", z.x.Comp, cp.In, why), codec.ErrCorrupt)
}

// verifier checks decompressed output unit by unit against the index and
// hands out the bytes a read wants once their unit checks.
type verifier struct {
	z      *Inflated
	span   int
	pos    int64 // decompressed offset of the next byte fed
	ustart int64 // the current unit
	uend   int64
	crc    uint32
	buf    []byte // the unit's bytes, for the cache
	dst    []byte
	dstOff int64
	want   int64 // the read ends here
	copied int
}

func (v *verifier) begin(pos int64) {
	v.pos = pos
	v.nextUnit()
}

// nextUnit starts the unit at v.pos.
func (v *verifier) nextUnit() {
	x := v.z.x
	for v.span+1 < len(x.Points) && x.Points[v.span+1].Out <= v.pos {
		v.span++
	}
	_, v.ustart, v.uend = v.z.unit(v.pos)
	v.crc = 0
	v.buf = nil
	if v.uend > v.dstOff-cacheBehind {
		v.buf = make([]byte, 0, v.uend-v.ustart)
	}
}

// cacheBehind is how far before a read the units decompressed on the way
// to it are kept in the cache: those further back are only checked. None
// are: a reader going on in order continues the paused decoder, and a
// shuffled read rarely wants what lies before it, so copying those units
// into fresh buffers cost more than it saved (200 shuffled 8 KiB records:
// 43.6 MB allocated before, 17.8 MB with none kept).
const cacheBehind = 0

// done reports whether the unit holding the read's last byte has checked.
func (v *verifier) done() bool { return v.pos >= v.want && v.pos == v.ustart }

// feed checks b, the next decompressed bytes, and returns what it did
// not take: the bytes after the read's last unit.
func (v *verifier) feed(b []byte) ([]byte, error) {
	for len(b) > 0 {
		k := min(int64(len(b)), v.uend-v.pos)
		v.crc = crc32cUpdate(v.crc, b[:k])
		if v.buf != nil {
			v.buf = append(v.buf, b[:k]...)
		}
		// Bytes the read wants go to dst now and count once checked.
		if lo, hi := max(v.pos, v.dstOff), min(v.pos+k, v.want); lo < hi {
			copy(v.dst[lo-v.dstOff:], b[lo-v.pos:hi-v.pos])
		}
		v.pos += k
		b = b[k:]
		if v.pos < v.uend {
			continue
		}
		cp := &v.z.x.Points[v.span]
		if u := (v.ustart - cp.Out) >> cp.Unit; v.crc != cp.Sums[u] {
			return nil, v.z.mismatch(v.span, fmt.Sprintf("decompressed bytes [%d, %d) do not match their checksum", v.ustart, v.uend))
		}
		if v.buf != nil {
			v.z.o.Cache.Put(v.z.owner, v.ustart, v.buf)
		}
		if v.uend > v.dstOff {
			v.copied = int(min(v.uend, v.want) - v.dstOff)
		}
		if v.pos >= v.z.x.Size {
			v.ustart = v.pos
			return b, nil
		}
		v.nextUnit()
		if v.pos >= v.want {
			return b, nil
		}
	}
	return nil, nil
}
