package recordio

// The pure part of appending to a recordio v2 file: what its end holds (the
// transformer chain, the trailer block) and the framing of new body blocks.
// Making appends durable and crash-safe — the lock, the journal, fsync,
// repair — is the index's job (index/rio_append.go), over these calls.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"

	"bufio"
	"bytes"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// TailOptions configure NewTail.
type TailOptions struct {
	MaxItems      int   // items per block are MaxItems+1, as WriterOptions.MaxItems
	MaxBlockBytes int64 // optional cut of blocks by raw size, as WriterOptions.MaxBlockBytes
}

// Tail is the end of a recordio v2 file, as appends see it: the
// transformer chain new blocks go through and the trailer block (if any)
// that must stay last. It encodes new body blocks; it writes only where it
// is told to.
type Tail struct {
	o          TailOptions
	chain      []transformer
	trailerOff int64  // offset of the trailer block, when trailer != nil
	trailer    []byte // the trailer block's chunks, verbatim
	buf        []byte
}

// NewTail reads the header and the trailer of the recordio v2 file r
// (size bytes, not empty).
func NewTail(r io.ReaderAt, size int64, o TailOptions) (*Tail, error) {
	if size == 0 {
		return nil, fmt.Errorf("%w: the file is empty; create recordio files with NewWriter", codec.ErrFormat)
	}
	s, err := NewScanner(r, size, codec.RecordIO, Options{})
	if err != nil {
		return nil, err
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	o.MaxItems = min(o.MaxItems, maxRecordIOMaxItems)
	t := &Tail{o: o, chain: s.chain}
	// Any valid trailer block at the end is kept last, promised or not: the
	// reference stops scanning at a trailer, so blocks after it would be lost.
	if loc, err := findTrailer(r, size, s.chain, s.opts.maxBlock(), s.opts.streamWindow()); err == nil {
		t.trailerOff = loc.Block
		t.trailer = make([]byte, size-loc.Block)
		if _, err := readFullAt(r, t.trailer, loc.Block); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Trailer returns the trailer block (its chunks, verbatim) and its offset,
// or nil when the file ends without one.
func (t *Tail) Trailer() (off int64, block []byte) { return t.trailerOff, t.trailer }

// Encode packs items into transformed body blocks cut into chunks.
func (t *Tail) Encode(items [][]byte) ([]byte, error) {
	var out bytes.Buffer
	if t.buf == nil {
		t.buf = make([]byte, chunkSize)
	}
	var sizes []int64
	var body []byte
	flush := func() error {
		if len(sizes) == 0 {
			return nil
		}
		stored, err := applyTransformers(t.chain, packBlock(sizes, body))
		if err != nil {
			return err
		}
		sizes, body = sizes[:0], body[:0]
		_, err = writeBlockTo(&out, bodyMagic, stored, t.buf)
		return err
	}
	var raw int64
	for _, it := range items {
		sizes = append(sizes, int64(len(it)))
		body = append(body, it...)
		raw += int64(len(it)) + int64(uvarintLen(uint64(len(it))))
		if len(sizes) >= t.o.MaxItems+1 || (t.o.MaxBlockBytes > 0 && raw >= t.o.MaxBlockBytes) {
			if err := flush(); err != nil {
				return nil, err
			}
			raw = 0
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// CheckStreams refuses, before anything is written, items that would make
// a transformed block larger than readers accept (ErrLimit).
func (t *Tail) CheckStreams(items []ItemSource) error {
	for _, it := range items {
		if it.Size < 0 {
			return fmt.Errorf("codec: negative item size %d", it.Size)
		}
		raw := it.Size + int64(uvarintLen(1)+uvarintLen(uint64(it.Size)))
		if len(t.chain) > 0 && raw > DefaultMaxBlockSize {
			return fmt.Errorf("%w: a %d-byte item makes a compressed block larger than readers accept (%d bytes)", codec.ErrLimit, it.Size, int64(DefaultMaxBlockSize))
		}
	}
	return nil
}

// Spill is scratch space for one transformed block: written once, then
// read back. The caller provides it (a temporary file, say); codec opens no
// files.
type Spill interface {
	io.Writer
	io.ReaderAt
}

// WriteStreams writes each item, read from its stream, as a block of its
// own at offset at of w and returns the bytes written. An untransformed
// block is cut into chunks as the item is read; a transformed one is
// compressed into spill() first (its chunk count depends on the compressed
// size) and cut from there, so memory stays at a few chunk buffers plus the
// compressor's window whatever the item size.
func (t *Tail) WriteStreams(w io.WriterAt, at int64, items []ItemSource, spill func() (Spill, func(), error)) (int64, error) {
	if t.buf == nil {
		t.buf = make([]byte, chunkSize)
	}
	start := at
	for _, it := range items {
		n, err := t.writeItemBlock(w, at, it, spill)
		if err != nil {
			return 0, err
		}
		at += n
	}
	return at - start, nil
}

// writeItemBlock writes the block holding the one item it at offset at of
// w and returns its length.
func (t *Tail) writeItemBlock(w io.WriterAt, at int64, it ItemSource, spill func() (Spill, func(), error)) (int64, error) {
	hdr := binary.AppendUvarint(binary.AppendUvarint(nil, 1), uint64(it.Size))
	raw := io.MultiReader(&sliceReader{b: hdr}, &exactReader{r: it.R, left: it.Size})
	rawLen := int64(len(hdr)) + it.Size
	if len(t.chain) == 0 {
		return writeBlockFrom(w, at, bodyMagic, raw, rawLen, t.buf)
	}
	tmp, done, err := spill()
	if err != nil {
		return 0, err
	}
	defer done()
	bw := bufio.NewWriterSize(tmp, chunkSize)
	stored, err := transformStream(t.chain, bw, raw, t.buf)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, err
	}
	return writeBlockFrom(w, at, bodyMagic, io.NewSectionReader(tmp, 0, stored), stored, t.buf)
}

// AppendCompleted reports whether a journaled append finished writing: the
// file f (size bytes) ends with the saved trailer block, and everything before it (the old
// blocks and the new ones written from the old trailer's offset) scans with
// no damage up to exactly where that trailer starts. Such a file is what
// the append meant to leave, so repair keeps it instead of rolling back.
func AppendCompleted(f io.ReaderAt, size, toff int64, trailer []byte) bool {
	tstart := size - int64(len(trailer))
	if len(trailer) == 0 || tstart < toff {
		return false
	}
	end := make([]byte, len(trailer))
	if _, err := f.ReadAt(end, tstart); err != nil || !bytes.Equal(end, trailer) {
		return false
	}
	s, err := NewScanner(f, size, codec.RecordIO, Options{VerifyBlocks: true})
	if err != nil {
		return false
	}
	for s.Next() {
	}
	return s.Err() == nil && len(s.Damage()) == 0 && s.goodEnd == tstart
}

// ConsistentEnd returns the size the file should have: its size when it
// ends with a valid trailer or a cleanly decoding block, else the end of
// the last cleanly decoding block, or of the whole trailer block right
// after it.
func ConsistentEnd(r io.ReaderAt, size int64) (int64, error) {
	s, err := NewScanner(r, size, codec.RecordIO, Options{})
	if err != nil {
		return 0, err
	}
	if _, err := findTrailer(r, size, s.chain, s.opts.maxBlock(), s.opts.streamWindow()); err == nil {
		return size, nil // ends with a valid trailer block
	}
	if size%chunkSize == 0 {
		cr := chunkReader{r: r, size: size}
		if h, _, f := cr.chunk(size - chunkSize); f == nil && h.index+1 == h.total {
			start := size - int64(h.total)*chunkSize
			if start == 0 && h.magic == headerMagic && size == s.goodEnd {
				return size, nil
			}
			if start >= s.goodEnd && h.magic == bodyMagic {
				if b, _, f := s.decodeBodyBlock(start); f == nil && b.Chunks == int(h.total) {
					return size, nil
				}
			}
		}
	}
	for s.Next() {
	}
	if s.Err() != nil {
		return 0, s.Err()
	}
	if s.pos == s.goodEnd && s.goodEnd < size {
		// The scan stopped at a trailer block: what follows it is the
		// tail, when it is whole.
		var buf []byte
		isTrailer := func(m [8]byte) bool { return m == trailerMagic }
		if _, chunks, f := readWholeBlock(&s.cr, s.pos, isTrailer, s.opts.maxBlock(), &buf); f == nil && chunks > 0 {
			return s.pos + int64(chunks)*chunkSize, nil
		}
	}
	return s.goodEnd, nil
}

// TornTail reports whether the bytes [off, size) of r are what a writer
// that stopped in the middle of a block leaves behind: the first chunks of
// one body (or trailer) block, each whole chunk intact (checksum, magic,
// index following the one before, same chunk count), the last one perhaps
// cut short (its header bytes, as far as they go, agree), and fewer chunks
// than the block has. When they are not, reason says what is there instead
// and at which offset.
func TornTail(r io.ReaderAt, off, size int64) (torn bool, reason string) {
	if off < 0 || off >= size {
		return false, fmt.Sprintf("no bytes at offset %d", off)
	}
	cr := chunkReader{r: r, size: size}
	var first chunkHdr
	for i := uint32(0); ; i++ {
		at := off + int64(i)*chunkSize
		if at >= size {
			return true, "" // the block's first i chunks
		}
		if size-at < chunkSize {
			return tornChunk(r, at, size, i, first)
		}
		h, _, f := cr.chunk(at)
		if f != nil {
			return false, fmt.Sprintf("%s at offset %d", f.reason, at)
		}
		if why := chunkFollows(h, i, first); why != "" {
			return false, fmt.Sprintf("%s at offset %d", why, at)
		}
		if i == 0 {
			first = h
		}
		if h.index+1 == h.total {
			return false, fmt.Sprintf("a whole block at offset %d that does not decode", off)
		}
	}
}

// chunkFollows says what is wrong with h as chunk i of a block whose first
// chunk is first (ignored for i == 0), or "" when nothing is.
func chunkFollows(h chunkHdr, i uint32, first chunkHdr) string {
	switch {
	case i == 0 && h.magic != bodyMagic && h.magic != trailerMagic:
		return fmt.Sprintf("not a block (magic % x)", h.magic)
	case i > 0 && h.magic != first.magic:
		return fmt.Sprintf("chunk %d of a block with another magic (% x)", i, h.magic)
	case h.index != i:
		return fmt.Sprintf("chunk index %d where %d follows", h.index, i)
	case h.total == 0 || h.index >= h.total:
		return fmt.Sprintf("chunk %d of %d", h.index, h.total)
	case i > 0 && h.total != first.total:
		return fmt.Sprintf("a block of %d chunks continued as one of %d", first.total, h.total)
	case h.size > maxChunkPayload:
		return fmt.Sprintf("invalid chunk size %d", h.size)
	}
	return ""
}

// tornChunk checks the partial chunk i at the end of the file (at, size):
// the header bytes it has must be those chunk i of the block would have.
func tornChunk(r io.ReaderAt, at, size int64, i uint32, first chunkHdr) (bool, string) {
	b := make([]byte, min(size-at, chunkHeader))
	if _, err := readFullAt(r, b, at); err != nil {
		return false, fmt.Sprintf("read error at offset %d: %v", at, err)
	}
	m := b[:min(len(b), 8)]
	body, trailer := bytes.HasPrefix(bodyMagic[:], m), bytes.HasPrefix(trailerMagic[:], m)
	if i > 0 {
		body, trailer = bytes.HasPrefix(first.magic[:], m), false
	}
	if !body && !trailer {
		return false, fmt.Sprintf("not a block (magic % x) at offset %d", m, at)
	}
	if len(b) < chunkHeader {
		return true, ""
	}
	if why := chunkFollows(parseChunkHdr(b), i, first); why != "" {
		return false, fmt.Sprintf("%s at offset %d", why, at)
	}
	return true, ""
}

// ItemSource is an item to append given as a stream: Size bytes read from R.
type ItemSource struct {
	R    io.Reader
	Size int64
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// transformStream compresses raw through the chain (first transformer
// applied first) into out and returns the stored length.
func transformStream(chain []transformer, out io.Writer, raw io.Reader, buf []byte) (int64, error) {
	cw := &countWriter{w: out}
	var w io.Writer = cw
	var closers []io.Closer // innermost (last applied) first
	for i := len(chain) - 1; i >= 0; i-- {
		t := chain[i]
		switch t.name {
		case "flate":
			fw, err := flate.NewWriter(w, t.level)
			if err != nil {
				return 0, err
			}
			w = fw
			closers = append(closers, fw)
		case "zstd":
			level := t.level
			if level < 0 {
				level = 5 // the reference's default
			}
			zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
				zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
			if err != nil {
				return 0, err
			}
			w = zw
			closers = append(closers, zw)
		default:
			return 0, fmt.Errorf("%w: recordio transformer %q not found", codec.ErrUnsupported, t.spec)
		}
	}
	_, err := io.CopyBuffer(w, raw, buf)
	// Close the outermost writer (the first transformer) first, so each
	// flushes into the next.
	for i := len(closers) - 1; i >= 0; i-- {
		if cerr := closers[i].Close(); err == nil {
			err = cerr
		}
	}
	return cw.n, err
}

// writeBlockFrom writes one block of chunks whose stored bytes, n of
// them, are read from r, at offset at of w, using buf (32768 bytes); it
// returns the bytes written.
func writeBlockFrom(w io.WriterAt, at int64, magic [8]byte, r io.Reader, n int64, buf []byte) (int64, error) {
	total := (n-1)/maxChunkPayload + 1
	if n == 0 {
		total = 1
	}
	if total > 1<<32-1 {
		return 0, fmt.Errorf("%w: block of %d bytes needs too many chunks", codec.ErrLimit, n)
	}
	for i := int64(0); i < total; i++ {
		k := min(n-i*maxChunkPayload, maxChunkPayload)
		c := buf[:chunkSize]
		if _, err := io.ReadFull(r, c[chunkHeader:chunkHeader+k]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = codec.ErrShortInput
			}
			return 0, err
		}
		copy(c, magic[:])
		binary.LittleEndian.PutUint32(c[12:], 0)
		binary.LittleEndian.PutUint32(c[16:], uint32(k))
		binary.LittleEndian.PutUint32(c[20:], uint32(total))
		binary.LittleEndian.PutUint32(c[24:], uint32(i))
		pad := c[chunkHeader+k:]
		for j := range pad {
			pad[j] = chunkPadding[j&3]
		}
		binary.LittleEndian.PutUint32(c[8:], crcIEEE(c[12:chunkHeader+k]))
		if _, err := w.WriteAt(c, at+i*chunkSize); err != nil {
			return 0, err
		}
	}
	return total * chunkSize, nil
}

// sliceReader reads a byte slice (a bytes.Reader without the Bytes method
// some decoders look for).
type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// exactReader reads exactly left bytes from r: fewer is ErrShortInput.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF {
		if e.left > 0 {
			return n, codec.ErrShortInput
		}
		err = nil
	}
	return n, err
}
