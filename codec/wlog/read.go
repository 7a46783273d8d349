package wlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/recfs/recfs/codec"
)

// ReadRecord reads bytes [off, off+len(p)) of rec's payload into p, with
// io.ReaderAt semantics (n < len(p) only with an error, io.EOF when the read
// runs past the end of the record). An uncompressed record is read in
// place: only the fragments that cover those bytes, each verified (header
// and checksum). A compressed one is read whole, verified and decompressed
// (see Decode), so callers that read a compressed record piece by piece
// should keep what Decode returns instead. A mismatch yields a
// *codec.CorruptError with the offset of the bad fragment. It is safe for
// concurrent use.
func ReadRecord(r io.ReaderAt, rec Record, p []byte, off int64, o Options) (int, error) {
	want, ok, err := codec.ClipRead(p, off, rec.Size)
	if !ok {
		return 0, err
	}
	if rec.Comp != None {
		b, err := Decode(r, rec, nil, o)
		if err != nil {
			return 0, err
		}
		n := copy(want, b[off:])
		return n, codec.ShortRead(n, len(p))
	}
	n := 0
	var start int64 // payload offset of fragment i
	for i := 0; n < len(want); i++ {
		f, ok := FragmentAt(rec, i)
		if !ok {
			return n, corrupt(rec.Off, "record layout ends early", codec.ErrCorrupt)
		}
		if end := start + int64(f.Len); end <= off+int64(n) {
			start = end
			continue
		}
		data, err := readFragment(r, rec, i, f, nil)
		if err != nil {
			return n, err
		}
		n += copy(want[n:], data[off+int64(n)-start:])
		start += int64(f.Len)
	}
	return n, codec.ShortRead(n, len(p))
}

// fragBufs holds page-sized buffers for readFragment.
var fragBufs = sync.Pool{New: func() any { return new([PageSize]byte) }}

// readFragment reads fragment i (f) of rec, verifies it and appends its
// data to dst, or returns a slice of a pooled page when dst is nil (valid
// until the next call's return to the pool: callers copy out at once).
func readFragment(r io.ReaderAt, rec Record, i int, f Fragment, dst []byte) ([]byte, error) {
	bp := fragBufs.Get().(*[PageSize]byte)
	defer fragBufs.Put(bp)
	m := HeaderSize + int64(f.Len)
	if f.Len < 0 || m > PageSize {
		return nil, corrupt(f.Off, codec.DamageLength.String(), codec.ErrCorrupt)
	}
	b := bp[:m]
	if k, err := r.ReadAt(b, f.Off); int64(k) < m {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, corrupt(f.Off, codec.DamageTruncChunk.String(), codec.ErrTruncated)
		}
		return nil, err
	}
	if err := checkFragment(b, rec, i); err != nil {
		err.Off = f.Off
		return nil, err
	}
	if dst == nil {
		// Copy out of the pooled page: the caller's slice must outlive it.
		return append([]byte(nil), b[HeaderSize:]...), nil
	}
	return append(dst, b[HeaderSize:]...), nil
}

// checkFragment verifies the fragment read into b as fragment i of rec:
// its kind, compression flag, length field and checksum.
func checkFragment(b []byte, rec Record, i int) *codec.CorruptError {
	_, more := FragmentAt(rec, i+1)
	var want byte
	switch {
	case i == 0 && !more:
		want = kindFull
	case i == 0:
		want = kindFirst
	case !more:
		want = kindLast
	default:
		want = kindMiddle
	}
	if b[0] != want|rec.Comp.flag() {
		return corrupt(0, "unexpected fragment type", codec.ErrCorrupt)
	}
	ln := len(b) - HeaderSize
	if int(binary.BigEndian.Uint16(b[1:])) != ln {
		return corrupt(0, codec.DamageLength.String(), codec.ErrCorrupt)
	}
	if codec.CRC32C(b[HeaderSize:]) != binary.BigEndian.Uint32(b[3:]) {
		return corrupt(0, codec.DamageChecksum.String(), codec.ErrCorrupt)
	}
	return nil
}

// ReadStored appends rec's stored bytes (compressed as rec.Comp says) to
// dst, verifying every fragment.
func ReadStored(r io.ReaderAt, rec Record, dst []byte) ([]byte, error) {
	if rec.Len < 0 {
		return dst, corrupt(rec.Off, "negative record length", codec.ErrCorrupt)
	}
	for i := 0; ; i++ {
		f, ok := FragmentAt(rec, i)
		if !ok {
			if i == 0 {
				return dst, corrupt(rec.Off, "record has no fragment", codec.ErrCorrupt)
			}
			return dst, nil
		}
		var err error
		if dst, err = readFragment(r, rec, i, f, dst); err != nil {
			return dst, err
		}
	}
}

// Decode appends rec's payload to dst: its stored bytes, verified and
// decompressed. The decompressed length must be rec.Size (which a scan
// bounded by Options.MaxRecord); anything else is a *codec.CorruptError.
func Decode(r io.ReaderAt, rec Record, dst []byte, o Options) ([]byte, error) {
	if rec.Comp == None {
		return ReadStored(r, rec, dst)
	}
	if rec.Size > o.maxRecord() {
		return dst, corrupt(rec.Off, fmt.Sprintf("record of %d bytes past the %d-byte limit", rec.Size, o.maxRecord()), codec.ErrLimit)
	}
	stored, err := ReadStored(r, rec, nil)
	if err != nil {
		return dst, err
	}
	if len(stored) == 0 {
		return dst, nil // a compressed record with no bytes is empty, as Prometheus reads it
	}
	out, err := decompress(rec.Comp, stored, rec.Size)
	if err != nil {
		return dst, corrupt(rec.Off, err.Error(), codec.ErrCorrupt)
	}
	if int64(len(out)) != rec.Size {
		return dst, corrupt(rec.Off, fmt.Sprintf("record decompresses to %d bytes, not %d", len(out), rec.Size), codec.ErrCorrupt)
	}
	if dst == nil {
		return out, nil
	}
	return append(dst, out...), nil
}

// decompress decodes stored bytes of compression c that must decode to
// size bytes; it never produces more than that.
func decompress(c Compression, stored []byte, size int64) ([]byte, error) {
	switch c {
	case Snappy:
		n, err := snappy.DecodedLen(stored)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if int64(n) != size {
			return nil, fmt.Errorf("snappy block of %d bytes, not %d", n, size)
		}
		out, err := snappy.Decode(make([]byte, n), stored)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		return out, nil
	case Zstd:
		out, err := zstdDecoder().DecodeAll(stored, make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		if int64(len(out)) > size {
			return nil, fmt.Errorf("zstd data decodes past %d bytes", size)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown compression %v", c)
}

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
)

// zstdDecoder returns the package's zstd decoder: safe for concurrent
// DecodeAll calls, refusing frames that decode past DefaultMaxRecord.
func zstdDecoder() *zstd.Decoder {
	zstdOnce.Do(func() {
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(DefaultMaxRecord), zstd.WithDecoderMaxWindow(DefaultMaxRecord))
	})
	return zstdDec
}

// decodedSize returns the decompressed length of the compressed record rec,
// whose first stored bytes are head: from the snappy block's header, from
// the zstd frame's content size, or (a zstd frame without one) by decoding
// the stored bytes read back from r. A size past limit, or a header that
// does not parse, is a *codec.CorruptError.
func decodedSize(r io.ReaderAt, rec Record, head []byte, limit int64) (int64, error) {
	var size int64
	switch rec.Comp {
	case Snappy:
		n, k := binary.Uvarint(head)
		if k <= 0 || n > 1<<32-1 {
			return 0, corrupt(rec.Off, "bad snappy block header", codec.ErrCorrupt)
		}
		size = int64(n)
	case Zstd:
		var h zstd.Header
		if err := h.Decode(head); err != nil || h.Skippable {
			return 0, corrupt(rec.Off, "bad zstd frame header", codec.ErrCorrupt)
		}
		if h.HasFCS {
			if h.FrameContentSize > uint64(limit) {
				return 0, corrupt(rec.Off, fmt.Sprintf("record decompresses past the %d-byte limit", limit), codec.ErrLimit)
			}
			size = int64(h.FrameContentSize)
			break
		}
		stored, err := ReadStored(r, rec, nil)
		if err != nil {
			return 0, err
		}
		out, err := zstdDecoder().DecodeAll(stored, nil)
		if err != nil {
			if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
				return 0, corrupt(rec.Off, fmt.Sprintf("record decompresses past the %d-byte limit", limit), codec.ErrLimit)
			}
			return 0, corrupt(rec.Off, "zstd: "+err.Error(), codec.ErrCorrupt)
		}
		size = int64(len(out))
	default:
		return int64(len(head)), nil
	}
	if size > limit {
		return 0, corrupt(rec.Off, fmt.Sprintf("record decompresses past the %d-byte limit", limit), codec.ErrLimit)
	}
	return size, nil
}
