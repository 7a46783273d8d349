package recordio

import (
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// blockStream reads the stored bytes of one v2 block as a stream: the
// payloads of its chunks in order, each chunk read and verified (CRC, magic,
// index, count) only when the stream reaches it. Nothing but the current
// chunk is held.
type blockStream struct {
	cr       chunkReader
	start    int64
	want     func([8]byte) bool
	next     int64 // index of the next chunk to load
	total    int64 // chunks in the block, known once chunk 0 is loaded
	magic    [8]byte
	p        []byte // unread payload of the current chunk
	stored   int64  // payload bytes loaded so far
	fail     *failure
	unwanted bool // chunk 0 holds a valid magic that want refused
}

// newBlockStream makes a stream of the block at start. buf, if not nil, is a
// chunk-sized buffer the stream may use.
func newBlockStream(r io.ReaderAt, size, start int64, want func([8]byte) bool, buf []byte) *blockStream {
	return &blockStream{cr: chunkReader{r: r, size: size, buf: buf}, start: start, want: want}
}

// begin loads chunk 0. It reports false when the block failed to verify or
// is not wanted (see fail and unwanted).
func (s *blockStream) begin() bool {
	if s.next == 0 && s.fail == nil && !s.unwanted {
		s.advance()
	}
	return s.fail == nil && !s.unwanted
}

// done reports whether every chunk has been loaded.
func (s *blockStream) done() bool { return s.total > 0 && s.next == s.total }

// advance loads the next chunk.
func (s *blockStream) advance() {
	co := s.start + s.next*chunkSize
	h, p, f := s.cr.chunk(co)
	if f != nil {
		s.fail = f
		return
	}
	if s.next == 0 {
		if h.index != 0 {
			s.fail = corruptAt(co, codec.ErrCorrupt, "block starts with chunk index %d", h.index)
			return
		}
		if !s.want(h.magic) {
			s.magic, s.unwanted = h.magic, true
			return
		}
		s.magic, s.total = h.magic, int64(h.total)
	} else {
		switch {
		case h.magic != s.magic:
			s.fail = corruptAt(co, codec.ErrCorrupt, "magic changed in the middle of a chunk sequence")
		case int64(h.index) != s.next:
			s.fail = corruptAt(co, codec.ErrCorrupt, "chunk index mismatch, got %d, expect %d", h.index, s.next)
		case int64(h.total) != s.total:
			s.fail = corruptAt(co, codec.ErrCorrupt, "chunk nchunk mismatch, got %d, expect %d", h.total, s.total)
		}
		if s.fail != nil {
			return
		}
	}
	s.p = p
	s.next++
	s.stored += int64(len(p))
}

// Read implements io.Reader over the block's stored bytes.
func (s *blockStream) Read(b []byte) (int, error) {
	for len(s.p) == 0 {
		switch {
		case s.fail != nil:
			return 0, s.fail
		case s.unwanted:
			s.fail = corruptAt(s.start, codec.ErrCorrupt, "block has no body or trailer magic")
			return 0, s.fail
		case s.done():
			return 0, io.EOF
		}
		s.advance()
	}
	n := copy(b, s.p)
	s.p = s.p[n:]
	return n, nil
}

// drain loads (and so verifies) every chunk not yet loaded.
func (s *blockStream) drain() *failure {
	if !s.begin() {
		return s.fail
	}
	for !s.done() && s.fail == nil {
		s.advance()
	}
	s.p = nil
	return s.fail
}

// streamDecoders undoes a transformer chain as a stream, keeping its
// decoders between uses. zstd decoders accept windows of at most window
// bytes (that is what a streaming decoder allocates). Not safe for
// concurrent use.
type streamDecoders struct {
	window int64
	zd     []*zstd.Decoder
	fr     []io.ReadCloser
}

// open returns a reader of the untransformed bytes of src.
func (sd *streamDecoders) open(chain []transformer, src io.Reader, window int64) (io.Reader, error) {
	if window != sd.window {
		sd.close()
		sd.window = window
	}
	if len(sd.zd) < len(chain) {
		sd.zd = append(sd.zd, make([]*zstd.Decoder, len(chain)-len(sd.zd))...)
		sd.fr = append(sd.fr, make([]io.ReadCloser, len(chain)-len(sd.fr))...)
	}
	r := src
	for i := len(chain) - 1; i >= 0; i-- {
		switch chain[i].name {
		case "zstd":
			if sd.zd[i] == nil {
				d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
					zstd.WithDecoderMaxWindow(uint64(window)), zstd.WithDecoderMaxMemory(uint64(window)))
				if err != nil {
					return nil, fmt.Errorf("%w: zstd: %v", codec.ErrCorrupt, err)
				}
				sd.zd[i] = d
			}
			if err := sd.zd[i].Reset(r); err != nil {
				return nil, fmt.Errorf("%w: zstd: %v", codec.ErrCorrupt, err)
			}
			r = sd.zd[i]
		case "flate":
			if sd.fr[i] == nil {
				sd.fr[i] = flate.NewReader(r)
			} else if err := sd.fr[i].(flate.Resetter).Reset(r, nil); err != nil {
				return nil, fmt.Errorf("%w: flate: %v", codec.ErrCorrupt, err)
			}
			r = sd.fr[i]
		default:
			return nil, fmt.Errorf("%w: recordio transformer %q not found", codec.ErrUnsupported, chain[i].spec)
		}
	}
	return r, nil
}

// close releases the decoders.
func (sd *streamDecoders) close() {
	for i, d := range sd.zd {
		if d != nil {
			d.Close()
		}
		sd.zd[i] = nil
	}
	for i := range sd.fr {
		sd.fr[i] = nil
	}
}

// streamErr classifies an error of a stream decoder whose window cap is
// window.
func streamErr(err error, window int64) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: zstd window larger than the %d-byte stream limit", codec.ErrLimit, window)
	}
	return fmt.Errorf("%w: %v", codec.ErrCorrupt, err)
}

// blockCursor is a stream decoder positioned inside one block of one
// reader: a read at or after pos continues from it instead of decoding the
// block from its start again.
type blockCursor struct {
	owner   uint64 // reader identity; 0 when not positioned
	block   int64
	pos     int64 // decoded bytes already produced
	end     bool  // the stream ended at pos
	r       io.Reader
	src     *blockStream // nil for legacy records
	dec     streamDecoders
	hold    []byte // what r reads from, when it is held in memory (legacy payloads)
	buf     []byte // chunk buffer of src
	scratch []byte // page buffer for pages decoded only to be skipped
	last    []byte // the last page served (never reused)
	lastIdx int64
	used    uint64
	busy    bool
}

// reset forgets the cursor's position (its decoders are kept).
func (cu *blockCursor) reset() {
	cu.owner, cu.block, cu.pos, cu.end, cu.r, cu.src, cu.hold = 0, 0, 0, false, nil, nil, nil
	cu.last, cu.lastIdx = nil, -1
}

// covers reports whether the cursor can serve decoded position pos of
// block of reader owner without restarting.
func (cu *blockCursor) covers(owner uint64, block, pos int64) bool {
	if cu.owner != owner || cu.block != block || cu.r == nil {
		return false
	}
	return cu.pos <= pos || (cu.last != nil && cu.lastIdx == pos/decodePage)
}

// acquire returns a cursor for reading block of reader owner at decoded
// position pos: the owner's idle cursor on that block that is furthest
// along but not past pos, else a new one, else the least recently used
// idle one (reset). It waits while every cursor is busy.
func (c *BlockCache) acquire(owner uint64, block, pos int64) *blockCursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		var match, idle *blockCursor
		for _, cu := range c.curs {
			if cu.busy {
				continue
			}
			if cu.covers(owner, block, pos) && (match == nil || cu.pos > match.pos) {
				match = cu
			}
			if idle == nil || cu.used < idle.used {
				idle = cu
			}
		}
		switch {
		case match != nil:
			match.busy = true
			return match
		case len(c.curs) < c.slots:
			cu := &blockCursor{busy: true, lastIdx: -1}
			c.curs = append(c.curs, cu)
			return cu
		case idle != nil:
			idle.busy = true
			idle.reset()
			return idle
		}
		c.free.Wait()
	}
}

// release returns a cursor taken by acquire.
func (c *BlockCache) release(cu *blockCursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cu.busy = false
	c.tick++
	cu.used = c.tick
	if len(c.curs) > c.slots {
		// The budget shrank: retire this cursor.
		for i, x := range c.curs {
			if x == cu {
				c.curs = append(c.curs[:i], c.curs[i+1:]...)
				cu.reset()
				cu.dec.close()
				break
			}
		}
	}
	c.free.Signal()
}

// cursors reports the cursors alive (for tests).
func (c *BlockCache) cursors() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.curs)
}
