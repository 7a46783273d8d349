package tfrecord

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/flate"

	"github.com/recfs/recfs/codec"
)

// The decompressor behind checkpoints. zdecoder inflates a GZIP or ZLIB
// file from a Checkpoint on, member after member, with klauspost's flate
// decoder: its WithPartialBlock option makes Read return at the end of
// every DEFLATE block (and whenever its 32 KiB window fills), which is how
// the indexing pass finds block boundaries, and NewReaderDict (Reset with a
// dictionary) starts a decoder at one, given the window. The decoder reads
// ahead of a block's end by up to a few bytes, so the exact bit of a
// boundary is not known from the bytes it consumed: the pass tries the
// few bits it can be and keeps the one whose decoding reproduces the
// output (see pass.go). At the end of a member's final block it reads no
// further than the block's last byte, which is how the trailer is found.

// errGap is what a decoder started for a read returns where the stream
// cannot be decoded on (damage, or bytes that are not a member): the
// SeekIndex has a checkpoint there if the indexing pass got past it.
var errGap = errors.New("compressed stream cannot be decoded on")

// errStopped is returned when a decoder's done channel closes.
var errStopped = errors.New("decompression stopped")

// decoderBufSize is the read-ahead of a decoder on its source.
const decoderBufSize = 64 << 10

// zdecoder states.
const (
	inData = iota // inside a member's DEFLATE data
	ended         // the stream has ended (io.EOF)
)

// eventKind says what the last chunk a zdecoder returned ended at.
type eventKind uint8

const (
	evNone   eventKind = iota
	evBlock            // the end of a DEFLATE block (not the member's last)
	evMember           // the start of a new member
)

// event is a place a zdecoder passed: the end of the chunk it returned.
type event struct {
	kind eventKind
	// bits is, for evBlock, the compressed bits consumed when the block
	// ended (the boundary lies up to maxLookahead bits before); for
	// evMember, 8 × the header's offset.
	bits int64
	out  int64 // decompressed offset of the place
	// gap says an evMember follows damage or a trailer that did not
	// check: a decoder reading on from before cannot get there, so the
	// member must be a checkpoint.
	gap bool
}

// maxLookahead bounds how many bits past a block's end the decoder may
// have consumed when it reports the block's end.
const maxLookahead = 40

// zdecoder inflates a compressed file from a checkpoint on. It is not safe
// for concurrent use.
type zdecoder struct {
	c    Compression
	src  io.ReaderAt
	size int64
	// build marks the indexing pass: damage is recorded and skipped (the
	// decoder looks for the next GZIP member), where a read's decoder
	// stops with errGap.
	build   bool
	done    <-chan struct{} // closed: stop with errStopped
	done2   <-chan struct{} // the same, from a second owner
	decoded *atomic.Int64   // counts decompressed bytes, if set
	floor   int64           // the indexing pass looks for members after damage from here on

	// The compressed bytes come from memory when the whole file is there
	// (a mapping: whole), through mem, or else from a stream through tap,
	// a shiftReader after a start on a bit, cnt and br. in is the one in
	// use, flateIn what the flate decoder reads (bytes.Reader and
	// bufio.Reader each have its fast path).
	whole   []byte
	end     int64  // a read's decoder reads the bytes before this offset into memory (0: it streams)
	rbuf    []byte // those bytes
	mem     memInput
	tap     tap
	cnt     counted // what br was fed (shifted bytes after a shifted start)
	br      *bufio.Reader
	in      peeker
	flateIn io.Reader
	fr      io.ReadCloser
	// partial says fr returns at block ends (see inflate).
	partial bool
	base    int64 // bit offset in src that the first bit br yields stands for

	buf     []byte
	state   int
	out     int64  // decompressed offset of the next byte
	mStart  int64  // byte offset of the current member's header (or of the start)
	mOut    int64  // decompressed offset where the current member began
	mSum    uint32 // checksum of the member's output so far
	wr      int    // the flate decoder's window position: block ends are flushes that leave it short of full
	ev      event
	gap     bool  // the next member follows damage
	pending error // to return after the chunk before it

	damage []codec.Damage
	gaps   []int64 // decompressed offsets where bytes of the stream are missing
}

// newZDecoder returns a decoder of the first size bytes of src.
func newZDecoder(src io.ReaderAt, size int64, c Compression) *zdecoder {
	d := &zdecoder{c: c, src: src, size: size, buf: make([]byte, windowSize)}
	d.br = bufio.NewReaderSize(nil, decoderBufSize)
	return d
}

// open makes the decoder read src from bit 8·off+shift on: from the file
// in memory (whole), through stream when given (a sequential reader of src
// from off, for shift 0), from the bytes up to d.end read into memory when
// d.end is set, else through a reader of src.
func (d *zdecoder) open(off int64, shift uint, stream io.Reader) error {
	if shift == 0 && d.whole != nil && stream == nil {
		d.mem.reset(d.whole, off, 0)
		d.in, d.flateIn = &d.mem, d.mem.r
		return nil
	}
	base := 8 * off
	var head []byte
	if shift > 0 {
		// Start on a bit: synthetic bytes first (see align.go).
		var b [1]byte
		if _, err := d.src.ReadAt(b[:], off); err != nil {
			return cutOrErr(err)
		}
		var pre int64
		head, pre = alignedHead(shift, b[0])
		base = 8*off + int64(shift) - pre // the file bit the head's first bit stands for
		off++
	}
	if d.end > off && stream == nil {
		if err := d.readAhead(head, off); err != nil {
			return err
		}
		d.mem.reset(d.rbuf, 0, base)
		d.in, d.flateIn = &d.mem, d.mem.r
		return nil
	}
	if stream == nil {
		stream = io.NewSectionReader(d.src, off, max(d.size-off, 0))
	}
	d.tap.reset(stream, off)
	var in io.Reader = &d.tap
	if head != nil {
		in = io.MultiReader(bytes.NewReader(head), &d.tap)
	}
	d.cnt = counted{r: in}
	d.br.Reset(&d.cnt)
	d.in, d.flateIn = d.br, d.br
	d.base = base
	return nil
}

// readAhead reads head and then the bytes of src from off to d.end into
// d.rbuf, in chunks of readAheadChunk with a look at the stop channels
// before each: a read stopped while its compressed bytes come in (tens of
// MiB for a long span, a pass over memory the kernel fills and, on a
// loaded machine, a good part of a second) fails with errStopped after at
// most one chunk. The buffer is allocated at its size when the one kept
// is too small, not grown from it, so that nothing copies or clears the
// old bytes and a new buffer's pages are touched as the chunks fill
// them. A source that ends before d.end leaves fewer bytes.
func (d *zdecoder) readAhead(head []byte, off int64) error {
	need := len(head) + int(d.end-off)
	buf := d.rbuf[:0]
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = append(buf, head...)
	for off < d.end {
		if d.stopped() {
			d.rbuf = buf[:0]
			return errStopped
		}
		n := len(buf)
		m := int(min(d.end-off, readAheadChunk))
		k, err := d.src.ReadAt(buf[n:n+m], off)
		buf = buf[:n+k]
		off += int64(k)
		if k < m {
			if err != nil && !errors.Is(err, io.EOF) {
				d.rbuf = buf[:0]
				return err
			}
			break // the source ends before d.end: short() tells
		}
	}
	d.rbuf = buf
	return nil
}

// stopped reports whether either of the decoder's stop channels closed.
func (d *zdecoder) stopped() bool {
	select {
	case <-d.done:
		return true
	case <-d.done2:
		return true
	default:
		return false
	}
}

// short reports whether the decoder ran out of the bytes read into memory
// for it before the end of the file (its d.end was too near).
func (d *zdecoder) short() bool {
	return d.in == &d.mem && d.whole == nil && d.end < d.size && d.mem.pos() >= int64(len(d.mem.b))-8
}

// consumedBits returns the compressed bit offset up to which the flate
// decoder (or the header and trailer parsing) has taken bits.
func (d *zdecoder) consumedBits() int64 {
	if d.in == &d.mem {
		return d.mem.base + 8*d.mem.pos()
	}
	return d.base + 8*(d.cnt.n-int64(d.br.Buffered()))
}

// kept returns the compressed bytes from offset at to those read so far,
// nil if they are no longer at hand.
func (d *zdecoder) kept(at int64) []byte {
	if d.in == &d.mem && d.whole != nil {
		return d.whole[min(at, int64(len(d.whole))):]
	}
	return d.tap.kept(at)
}

// start positions the decoder at cp, whose window (inflated) is window,
// reading through stream when given.
func (d *zdecoder) start(cp *Checkpoint, window []byte, stream io.Reader) error {
	d.out, d.mOut, d.mSum = cp.Out, cp.MemberOut, cp.Sum
	d.ev, d.gap, d.state, d.pending = event{}, false, inData, nil
	if cp.Member {
		if err := d.open(cp.In/8, 0, stream); err != nil {
			return d.cut(err)
		}
		return d.member()
	}
	d.mStart = cp.In / 8
	if err := d.open(cp.In/8, uint(cp.In%8), stream); err != nil {
		return d.cut(err)
	}
	d.inflate(window)
	d.wr = len(window) % windowSize
	return nil
}

// inflate starts DEFLATE data at br's position with the given window. The
// indexing pass needs a decoder that returns at block ends, an option that
// Reset forgets: it gets a new one, except after a small member (whose
// successor is likely small too, and a checkpoint at its header anyway),
// so that a file of many small members does not cost an allocation each.
func (d *zdecoder) inflate(window []byte) {
	if d.build && d.out-d.mOut >= smallMember || d.fr == nil {
		d.fr = flate.NewReaderOpts(d.flateIn, flate.WithPartialBlock(), flate.WithDict(window))
		d.partial = d.build
		return
	}
	d.fr.(flate.Resetter).Reset(d.flateIn, window)
	d.partial = false
}

// smallMember is the member output below which the indexing pass does not
// look for block ends in the member after it.
const smallMember = 256 << 10

// next returns the next chunk of output (at most windowSize bytes, valid
// until the next call) and what it ended at (d.ev). At the end of the
// stream it returns io.EOF; a read's decoder returns errGap where the
// stream cannot be decoded on.
func (d *zdecoder) next() ([]byte, error) {
	d.ev = event{}
	if err := d.pending; err != nil {
		d.pending = nil
		return nil, err
	}
	for {
		if d.state == ended {
			return nil, io.EOF
		}
		if d.stopped() {
			return nil, errStopped
		}
		n, err := d.fr.Read(d.buf)
		if n > 0 {
			d.emit(d.buf[:n])
		}
		switch {
		case err == nil:
			if d.wr += n; d.wr == windowSize {
				d.wr = 0 // the window filled: not (known to be) a block end
			} else if n > 0 && d.partial {
				d.ev = event{kind: evBlock, bits: d.consumedBits(), out: d.out}
			}
		case errors.Is(err, io.EOF):
			err = d.trailer()
		default:
			err = d.broken(err)
		}
		if err != nil {
			if n > 0 {
				d.pending = err // the bytes before it first
				return d.buf[:n], nil
			}
			return nil, err
		}
		if n > 0 {
			return d.buf[:n], nil
		}
		if d.ev.kind == evMember && d.build {
			return d.buf[:0], nil // report the member start even without output
		}
	}
}

// emit accounts for output p of the current member.
func (d *zdecoder) emit(p []byte) {
	if d.c == Zlib {
		d.mSum = adler32Update(d.mSum, p)
	} else {
		d.mSum = crc32.Update(d.mSum, crc32.IEEETable, p)
	}
	d.out += int64(len(p))
	if d.decoded != nil {
		n := d.decoded.Add(int64(len(p)))
		if h := decodedHook.Load(); h != nil {
			(*h)(n)
		}
	}
}

// decodedHook, when set (by a test), is called with an Inflated's count
// of decompressed bytes each time a read's decoder adds to it.
var decodedHook atomic.Pointer[func(total int64)]

// trailer checks the trailer of a member whose DEFLATE data has ended and
// goes on to what follows it. The decoder reads no further than the last
// byte of a member's final block, so the trailer is next.
func (d *zdecoder) trailer() error {
	ts := trailerSize(d.c)
	t, err := d.in.Peek(ts)
	if len(t) < ts {
		return d.cut(err)
	}
	ok := trailerOK(d.c, t, d.mSum, d.out-d.mOut)
	d.in.Discard(ts)
	if !ok {
		d.record(fmt.Sprintf("%s member ending at compressed offset %d: checksum or size in the trailer does not match the data", d.c, d.consumedBits()/8-int64(ts)), codec.DamageChecksum, codec.ErrCorrupt)
		d.gap = true
	}
	return d.after()
}

// after goes on after a member's trailer: another member, the end of the
// file (possibly after zero padding, which tape and storage tools leave
// and gzip accepts), or bytes that are neither.
func (d *zdecoder) after() error {
	b, err := d.in.Peek(1)
	if len(b) == 0 {
		if err = cutOrErr(err); err == errCut {
			d.state = ended
			return nil
		}
		return err
	}
	if b[0] == 0 {
		if ok, err := d.skipZeros(); ok || err != nil {
			return err
		}
	}
	if d.c == Zlib {
		return d.garbage()
	}
	return d.member()
}

// skipZeros consumes zero bytes; it reports whether they ran to the end of
// the file (which has then ended).
func (d *zdecoder) skipZeros() (bool, error) {
	for {
		b, err := d.in.Peek(decoderBufSize)
		i := 0
		for i < len(b) && b[i] == 0 {
			i++
		}
		d.in.Discard(i)
		if i < len(b) {
			return false, nil
		}
		if err != nil {
			if err = cutOrErr(err); err == errCut {
				d.state = ended
				return true, nil
			}
			return false, err
		}
	}
}

// member reads a member header at the current byte and starts its data.
func (d *zdecoder) member() error {
	q := d.consumedBits() / 8
	_, err := readHeader(d.in, d.c)
	switch {
	case err == errCut:
		return d.cut(io.ErrUnexpectedEOF)
	case err == errNotMember:
		return d.garbage()
	case err != nil:
		return err
	}
	d.inflate(nil)
	d.mStart, d.mOut, d.mSum, d.wr = q, d.out, initialSum(d.c), 0
	d.state = inData
	d.ev = event{kind: evMember, bits: 8 * q, out: d.out, gap: d.gap}
	d.gap = false
	return nil
}

// garbage handles bytes after a member that start no member.
func (d *zdecoder) garbage() error {
	q := d.consumedBits() / 8
	if !d.build {
		return errGap
	}
	if d.c == Zlib {
		d.record(fmt.Sprintf("%d bytes after the end of the zlib stream (compressed offset %d)", d.size-q, q), codec.DamageOther, codec.ErrCorrupt)
		d.state = ended
		return nil
	}
	return d.skip(fmt.Sprintf("bytes at compressed offset %d are not a gzip member", q), codec.DamageOther, q+1)
}

// broken handles an error of the flate decoder: the file ends inside the
// data (a shard still being written, or cut), the data is corrupt, or the
// source failed.
func (d *zdecoder) broken(err error) error {
	if d.in != &d.mem && d.tap.err != nil && !errors.Is(d.tap.err, io.EOF) {
		return d.tap.err // the source failed: not the data's fault
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return d.cut(err)
	}
	if !d.build {
		return errGap
	}
	at := d.consumedBits() / 8
	reason := fmt.Sprintf("%s data does not decompress near compressed offset %d (%v)", d.c, at, err)
	if d.c == Zlib {
		d.record(reason, codec.DamageOther, codec.ErrCorrupt)
		d.state = ended
		return nil
	}
	return d.skip(reason, codec.DamageOther, d.mStart+1)
}

// cut ends a stream whose file ends inside a member: what was decompressed
// stays, the rest is damage.
func (d *zdecoder) cut(err error) error {
	if err = cutOrErr(err); err != errCut {
		return err
	}
	if d.build {
		d.record(fmt.Sprintf("%s stream cut short at compressed offset %d", d.c, d.size), codec.DamageTruncChunk, codec.ErrTruncated)
	}
	d.state = ended
	return nil
}

// record notes damage at the current decompressed offset (the indexing
// pass only). Compressed-stream damage has no decompressed length.
func (d *zdecoder) record(reason string, kind codec.DamageKind, err error) {
	if d.build {
		d.damage = append(d.damage, codec.Damage{Off: d.out, Kind: kind, Reason: reason, Err: err})
	}
}

// skip records damage of the given kind (ErrCorrupt) and goes on at the
// first GZIP member at or after byte from that decodes; with none, the
// stream ends there.
func (d *zdecoder) skip(reason string, kind codec.DamageKind, from int64) error {
	m, err := findMember(d.src, d.size, max(from, d.floor), d.done)
	if err != nil {
		return err
	}
	if m < 0 {
		d.record(reason+"; no gzip member follows", kind, codec.ErrCorrupt)
		d.state = ended
		return nil
	}
	d.record(fmt.Sprintf("%s; resumed at the gzip member at compressed offset %d", reason, m), kind, codec.ErrCorrupt)
	d.gap = true
	d.gaps = append(d.gaps, d.out)
	if err := d.open(m, 0, nil); err != nil {
		return err
	}
	return d.member()
}

// findMember returns the offset of the first GZIP member at or after from
// whose data decompresses (64 KiB of it, or all of it), -1 if none.
func findMember(src io.ReaderAt, size, from int64, done <-chan struct{}) (int64, error) {
	const win = 64 << 10
	buf := make([]byte, win+2)
	var probe *zdecoder
	for off := from; off+3 <= size; off += win {
		select {
		case <-done:
			return -1, errStopped
		default:
		}
		n, err := src.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n < 3 {
			return -1, cutIO(err)
		}
		b := buf[:n]
		for i := 0; i+3 <= len(b) && i < win; i++ {
			j := bytes.IndexByte(b[i:], 0x1f)
			if j < 0 || i+j >= win {
				break
			}
			i += j
			if i+3 > len(b) || !gzipHeader(b[i:min(i+4, len(b))]) {
				continue
			}
			if probe == nil {
				probe = newZDecoder(src, size, Gzip)
				probe.done = done
			}
			if probe.decodes(off + int64(i)) {
				return off + int64(i), nil
			}
		}
	}
	return -1, nil
}

// cutIO drops end-of-file errors.
func cutIO(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// decodes reports whether a GZIP member at byte m decompresses: 64 KiB of
// output, or all of it (possibly cut short by the end of the file).
func (d *zdecoder) decodes(m int64) bool {
	if err := d.start(&Checkpoint{In: 8 * m, Member: true}, nil, nil); err != nil {
		return false
	}
	for d.out < 64<<10 && d.mStart == m {
		if _, err := d.next(); err != nil {
			return err == io.EOF || d.mStart != m
		}
	}
	return true // 64 KiB decoded, or the member ended whole
}
