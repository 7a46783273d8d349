package recordio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// WriterOptions configures NewWriter.
type WriterOptions struct {
	Header        []HeaderEntry // user entries, written after transformer entries and trailer=true (reference order, spec 6)
	Transformers  []string      // e.g. "flate", "flate 9", "zstd", "zstd 3"; unknown → error at NewWriter
	Trailer       bool          // header promises a trailer (KeyTrailer)
	MaxItems      int           // items per block are MaxItems+1 as in the reference (default 16384 → 16385 per block)
	MaxBlockBytes int64         // optional extra cut: flush a block when its raw size reaches this (0 = no limit, as reference)
}

// Writer writes a grailbio recordio v2 file. Without transformers
// its output is byte-identical to the reference writer's for the same items,
// flushes and header; with flate or zstd the compressed bytes depend on the
// compressor version but any reader decodes them.
//
// It is not safe for concurrent use.
type Writer struct {
	w          io.Writer
	o          WriterOptions
	chain      []transformer
	hdrItem    []byte
	off        int64 // bytes written so far
	headerDone bool
	sizes      []int64
	body       []byte
	trailerSet bool
	closed     bool
	err        error
	chunk      []byte
}

// errRecordIOWriter is returned once a writer has failed or been closed.
var errRecordIOWriter = errors.New("codec: recordio writer closed or failed")

// NewWriter checks the options and returns a writer. Nothing is
// written until the first block is flushed (or Close).
func NewWriter(w io.Writer, o WriterOptions) (*Writer, error) {
	chain, err := parseTransformers(o.Transformers, true)
	if err != nil {
		return nil, err
	}
	var entries []HeaderEntry
	for _, t := range o.Transformers {
		entries = append(entries, HeaderEntry{Key: HeaderKeyTransformer, Value: t})
	}
	if o.Trailer {
		entries = append(entries, HeaderEntry{Key: HeaderKeyTrailer, Value: true})
	}
	entries = append(entries, o.Header...)
	hdr, err := encodeHeaderItem(entries)
	if err != nil {
		return nil, err
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	o.MaxItems = min(o.MaxItems, maxRecordIOMaxItems)
	return &Writer{w: w, o: o, chain: chain, hdrItem: hdr}, nil
}

// Append adds one item (copied) to the current block. The returned
// location has the block's offset (counted from the first byte this writer
// writes) and the item's index; Off is -1 because it depends on the block's
// final item count, known only when the block is flushed (a scanner reports
// it). A block is flushed when it holds MaxItems+1 items or reaches
// MaxBlockBytes.
func (w *Writer) Append(item []byte) (ItemLoc, error) {
	if w.err != nil || w.closed || w.trailerSet {
		return ItemLoc{}, w.stateErr()
	}
	if !w.headerDone {
		if err := w.writeHeader(); err != nil {
			return ItemLoc{}, err
		}
	}
	loc := ItemLoc{Block: w.off, Item: len(w.sizes), Off: -1, Len: int64(len(item))}
	w.sizes = append(w.sizes, int64(len(item)))
	w.body = append(w.body, item...)
	if len(w.sizes) >= w.o.MaxItems+1 || (w.o.MaxBlockBytes > 0 && w.rawLen() >= w.o.MaxBlockBytes) {
		if err := w.Flush(); err != nil {
			return ItemLoc{}, err
		}
	}
	return loc, nil
}

func (w *Writer) stateErr() error {
	if w.err != nil {
		return w.err
	}
	if w.trailerSet {
		return fmt.Errorf("%w: trailer already written", errRecordIOWriter)
	}
	return errRecordIOWriter
}

// rawLen is the raw size of the pending block.
func (w *Writer) rawLen() int64 {
	n := int64(uvarintLen(uint64(len(w.sizes))))
	for _, s := range w.sizes {
		n += int64(uvarintLen(uint64(s)))
	}
	return n + int64(len(w.body))
}

func uvarintLen(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// Flush writes the pending items as one block; it does nothing when no
// item is pending.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.sizes) == 0 {
		return nil
	}
	raw := packBlock(w.sizes, w.body)
	w.sizes, w.body = w.sizes[:0], w.body[:0]
	return w.writeTransformed(bodyMagic, raw)
}

// packBlock builds a raw block: count, sizes, bodies (spec section 4).
func packBlock(sizes []int64, body []byte) []byte {
	raw := make([]byte, 0, len(body)+binary.MaxVarintLen64*(len(sizes)+1))
	raw = binary.AppendUvarint(raw, uint64(len(sizes)))
	for _, s := range sizes {
		raw = binary.AppendUvarint(raw, uint64(s))
	}
	return append(raw, body...)
}

func (w *Writer) writeTransformed(magic [8]byte, raw []byte) error {
	stored, err := applyTransformers(w.chain, raw)
	if err != nil {
		w.err = err
		return err
	}
	return w.writeBlock(magic, stored)
}

func (w *Writer) writeHeader() error {
	w.headerDone = true
	return w.writeBlock(headerMagic, packBlock([]int64{int64(len(w.hdrItem))}, w.hdrItem))
}

// writeBlock cuts stored into chunks (spec 3.4) and writes them.
func (w *Writer) writeBlock(magic [8]byte, stored []byte) error {
	if w.chunk == nil {
		w.chunk = make([]byte, chunkSize)
	}
	n, err := writeBlockTo(w.w, magic, stored, w.chunk)
	w.off += n
	if err != nil {
		w.err = err
	}
	return err
}

// writeBlockTo writes one block of chunks using buf (32768 bytes) and
// returns the bytes written.
func writeBlockTo(out io.Writer, magic [8]byte, stored []byte, buf []byte) (int64, error) {
	total := (len(stored)-1)/maxChunkPayload + 1
	if len(stored) == 0 {
		total = 1
	}
	var written int64
	for i := 0; i < total; i++ {
		p := stored[min(i*maxChunkPayload, len(stored)):min((i+1)*maxChunkPayload, len(stored))]
		c := buf[:chunkSize]
		copy(c, magic[:])
		binary.LittleEndian.PutUint32(c[12:], 0)
		binary.LittleEndian.PutUint32(c[16:], uint32(len(p)))
		binary.LittleEndian.PutUint32(c[20:], uint32(total))
		binary.LittleEndian.PutUint32(c[24:], uint32(i))
		copy(c[chunkHeader:], p)
		pad := c[chunkHeader+len(p):]
		for k := range pad {
			pad[k] = chunkPadding[k&3]
		}
		binary.LittleEndian.PutUint32(c[8:], crcIEEE(c[12:chunkHeader+len(p)]))
		n, err := out.Write(c)
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// chunkPadding is the reference writer's filler pattern (spec 3.3).
var chunkPadding = [4]byte{0xde, 0xad, 0xbe, 0xef}

// SetTrailer flushes pending items and writes the trailer block holding b.
// The writer must have been made with the Trailer option; no items may
// follow.
func (w *Writer) SetTrailer(b []byte) error {
	if !w.o.Trailer {
		return errors.New("codec: SetTrailer on a recordio writer without the Trailer option")
	}
	if w.err != nil || w.closed || w.trailerSet {
		return w.stateErr()
	}
	if !w.headerDone {
		if err := w.writeHeader(); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	w.trailerSet = true
	return w.writeTransformed(trailerMagic, packBlock([]int64{int64(len(b))}, b))
}

// Close flushes pending items; if nothing was written yet it writes the
// header block, giving a header-only file. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err == nil && !w.headerDone {
		w.err = w.writeHeader()
	}
	if w.err == nil {
		w.err = w.Flush()
	}
	w.closed = true
	return w.err
}

// Offset returns the number of bytes written so far.
func (w *Writer) Offset() int64 { return w.off }
