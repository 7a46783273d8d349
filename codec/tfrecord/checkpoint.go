package tfrecord

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
)

// Seek points into a compressed stream (the zran model of zlib's examples
// and of indexed_gzip). DEFLATE cannot be entered at an arbitrary byte: a
// decoder can start only at a member header or at the first bit of a block,
// and then only knowing the up to 32 KiB of output before it that the
// block's back-references may copy. A Checkpoint records such a place, the
// window (sparse and deflated, to keep it small), and CRC-32Cs of the output
// that follows, so that a read started there can be checked before its
// bytes are served: a checkpoint that is wrong (planted, or of another
// version of the file) gives a corruption error, never other bytes.

// Spacing of checkpoints. A checkpoint is made when at least MinSpacing
// decompressed bytes and checkpointCost times its own saved size in
// compressed bytes follow the previous one: the checkpoints of a file then
// take at most 1/checkpointCost of its compressed size, and reads
// decompress a few hundred KiB on average before the bytes they want
// (about 1 ms). A window is sparse (sparse.go): the bytes of it that
// nothing after the checkpoint copies are stored as zeros, which leaves
// about a third of a text window to deflate; very compressible data gets
// sparser checkpoints, and decompresses fast.
const (
	MinSpacing     = 256 << 10
	checkpointCost = 40
	// windowSize is DEFLATE's back-reference reach.
	windowSize = 32 << 10
)

// Bounds on a span's verification unit: 2^unitMin bytes normally, coarser
// where the data compresses so well that four bytes of CRC a unit would
// weigh on the saved table (see unitFor).
const (
	unitMin = 14
	unitMax = 24
)

// A Checkpoint is a place where decompression can start.
type Checkpoint struct {
	// In is the compressed offset in bits: of a GZIP member's (the ZLIB
	// stream's) header when Member is set, else of the first bit of a
	// DEFLATE block.
	In int64
	// Out is the decompressed offset of the first byte decoded from In.
	Out int64
	// Member says In is a member header: no window is needed.
	Member bool
	// MemberOut is the decompressed offset where In's member began, and
	// Sum the checksum of the member's output before Out (CRC-32 for
	// GZIP, Adler-32 for ZLIB): a decoder started at In checks the
	// member's trailer with them.
	MemberOut int64
	Sum       uint32
	// Window is the DEFLATE-compressed window: the WindowLen bytes of
	// output before Out (32 KiB, or the member's output so far when that
	// is shorter). Empty at a member header, and when Stored says where
	// the window is kept instead.
	Window    []byte
	WindowLen int
	// Stored, when set, is the window kept outside memory (in a saved
	// table's file), read only when a decoder starts at this checkpoint.
	Stored *StoredWindow
	// Unit is log2 of the verification unit of the span from Out to the
	// next checkpoint (or the end of the stream), and Sums the CRC-32C of
	// each of the span's units, the last one possibly short.
	Unit uint8
	Sums []uint32
}

// PointSize is how many bytes a checkpoint takes in a saved table besides
// its window and unit checksums: offsets, member state, lengths and the
// window's SHA-256.
const PointSize = 8 + 8 + 1 + 8 + 4 + 4 + 1 + 4 + 4 + sha256.Size

// EncodedSize is how many bytes c takes in a saved table.
func (c *Checkpoint) EncodedSize() int64 {
	return PointSize + int64(c.WindowBytes()) + 4*int64(len(c.Sums))
}

// WindowBytes is the length of c's deflated window, in memory or stored.
func (c *Checkpoint) WindowBytes() int {
	if c.Stored != nil && len(c.Window) == 0 {
		return c.Stored.Len
	}
	return len(c.Window)
}

// WindowSum returns the SHA-256 of c's deflated window, which a saved
// table keeps with the checkpoint (see StoredWindow).
func (c *Checkpoint) WindowSum() [sha256.Size]byte {
	if c.Stored != nil && len(c.Window) == 0 {
		return c.Stored.Sum
	}
	return sha256.Sum256(c.Window)
}

// DeflatedWindow returns c's deflated window: Window, or the stored one
// (read, and checked against its SHA-256, the first time). A stored window
// that is short or does not match gives an error matching ErrStoredWindow;
// one that cannot be read, a *WindowReadError.
func (c *Checkpoint) DeflatedWindow() ([]byte, error) {
	if c.Stored == nil || len(c.Window) > 0 {
		return c.Window, nil
	}
	return c.Stored.load()
}

// A StoredWindow is a checkpoint's deflated window kept in a saved table's
// file rather than in memory: the table's small part (offsets, unit
// checksums, each window's SHA-256) is read when the table is loaded, and
// a window only when a read starts at its checkpoint. What vouches for the
// window is Sum, which the loaded part holds (and whatever vouches for
// that part: a saved table's seal); the bytes read at Off are used only if
// they hash to it, so a window planted, swapped or left from another
// version of the table gives a corruption error, never other output.
type StoredWindow struct {
	R   io.ReaderAt // where the window is kept
	Off int64       // its offset in R
	Len int         // its deflated length
	Sum [sha256.Size]byte

	got atomic.Pointer[[]byte] // the window once read and checked
}

// Loaded reports whether the window was read (and matched) already.
func (w *StoredWindow) Loaded() bool { return w.got.Load() != nil }

// ErrStoredWindow marks a stored window that is missing, short or does not
// match its SHA-256: the saved table that names it is wrong (not the
// compressed stream), so its holder can drop that table and index the
// stream afresh. It is not a codec.ErrCorrupt.
var ErrStoredWindow = errors.New("tfrecord: stored checkpoint window does not match the table")

// A WindowReadError is the failure to read a stored window (as opposed to
// a window that was read and does not match: a corruption).
type WindowReadError struct{ Err error }

func (e *WindowReadError) Error() string {
	return "tfrecord: reading a stored checkpoint window: " + e.Err.Error()
}
func (e *WindowReadError) Unwrap() error { return e.Err }

// load returns the window, reading and checking it the first time. A
// window stored short or not matching Sum gives an error matching
// ErrStoredWindow; one that cannot be read, a *WindowReadError.
func (w *StoredWindow) load() ([]byte, error) {
	if b := w.got.Load(); b != nil {
		return *b, nil
	}
	if w.Len <= 0 || w.Len > maxWindowEncoded || w.R == nil {
		return nil, fmt.Errorf("%w: no stored window of %d bytes at %d", ErrStoredWindow, w.Len, w.Off)
	}
	b := make([]byte, w.Len)
	n, err := w.R.ReadAt(b, w.Off)
	switch {
	case n == len(b):
	case err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: stored window short: %d of %d bytes at %d", ErrStoredWindow, n, w.Len, w.Off)
	default:
		return nil, &WindowReadError{Err: err}
	}
	if sha256.Sum256(b) != w.Sum {
		return nil, fmt.Errorf("%w: stored window of %d bytes at %d does not match its SHA-256", ErrStoredWindow, w.Len, w.Off)
	}
	w.got.Store(&b)
	return b, nil
}

// A SeekIndex is what a pass over a compressed stream learned: its
// decompressed size and its checkpoints, in stream order, the first at the
// start of the stream.
type SeekIndex struct {
	Comp   Compression
	Size   int64 // decompressed bytes
	Points []Checkpoint
}

// EncodedSize is about how many bytes the checkpoints take in a saved
// table.
func (x *SeekIndex) EncodedSize() int64 {
	var n int64
	for i := range x.Points {
		n += x.Points[i].EncodedSize()
	}
	return n
}

// spanEnd returns the decompressed offset where span i ends.
func (x *SeekIndex) spanEnd(i int) int64 {
	if i+1 < len(x.Points) {
		return x.Points[i+1].Out
	}
	return x.Size
}

// span returns the index of the checkpoint whose span holds decompressed
// offset off (the last one at or before it).
func (x *SeekIndex) span(off int64) int {
	return sort.Search(len(x.Points), func(i int) bool { return x.Points[i].Out > off }) - 1
}

// unitCount returns how many verification units a span of n bytes with
// units of 2^u bytes has.
func unitCount(n int64, u uint8) int64 {
	return (n + 1<<u - 1) >> u
}

// Check verifies that x describes a possible stream of a compressed file of
// size bytes: checkpoints in increasing order inside the file, the first at
// its start, windows no longer than DEFLATE's and as long as the output
// before them, and a unit checksum for every unit of every span. It does
// not read the file: a checkpoint that passes is still only a claim, which
// reads check against the unit checksums.
func (x *SeekIndex) Check(size int64) error {
	if x.Comp != Gzip && x.Comp != Zlib {
		return fmt.Errorf("compression %v has no checkpoints", x.Comp)
	}
	if x.Size < 0 || len(x.Points) == 0 {
		return fmt.Errorf("decompressed size %d, %d checkpoints", x.Size, len(x.Points))
	}
	if p := x.Points[0]; p.In != 0 || p.Out != 0 || !p.Member {
		return fmt.Errorf("first checkpoint at bit %d, output %d, member %v", p.In, p.Out, p.Member)
	}
	for i := range x.Points {
		if err := x.checkPoint(i, size); err != nil {
			return err
		}
	}
	return nil
}

// checkPoint verifies checkpoint i of x (see Check): after the one before
// it, inside the file and its span, carrying state only when it is not at a
// member header, with a window and unit checksums of the lengths they imply.
func (x *SeekIndex) checkPoint(i int, size int64) error {
	p := &x.Points[i]
	if i > 0 && (p.In <= x.Points[i-1].In || p.Out < x.Points[i-1].Out) {
		return fmt.Errorf("checkpoint %d (bit %d, output %d) not after the one before it", i, p.In, p.Out)
	}
	end := x.spanEnd(i)
	if p.In < 0 || (p.In >= 8*size && i > 0) || p.Out > end || p.MemberOut < 0 || p.MemberOut > p.Out {
		return fmt.Errorf("checkpoint %d at bit %d, output %d (member from %d, span end %d, file %d bytes)", i, p.In, p.Out, p.MemberOut, end, size)
	}
	if p.Member && (p.In%8 != 0 || p.MemberOut != p.Out || p.Sum != initialSum(x.Comp) || p.WindowLen != 0 || p.WindowBytes() != 0 || p.Stored != nil) {
		return fmt.Errorf("checkpoint %d at a member header carries state", i)
	}
	if !p.Member && (p.WindowLen != int(min(windowSize, p.Out-p.MemberOut)) || p.WindowBytes() <= 0 || p.WindowBytes() > maxWindowEncoded) {
		return fmt.Errorf("checkpoint %d: window of %d bytes (%d deflated) after %d bytes of its member", i, p.WindowLen, p.WindowBytes(), p.Out-p.MemberOut)
	}
	if p.Unit < unitMin || p.Unit > unitMax || int64(len(p.Sums)) != unitCount(end-p.Out, p.Unit) {
		return fmt.Errorf("checkpoint %d: %d unit checksums of 2^%d bytes for %d bytes", i, len(p.Sums), p.Unit, end-p.Out)
	}
	return nil
}

// maxWindowEncoded bounds a deflated window: DEFLATE's stored blocks add a
// few bytes to 32 KiB of incompressible data.
const maxWindowEncoded = windowSize + 1024

// initialSum is the checksum of no bytes in c's trailer's kind.
func initialSum(c Compression) uint32 {
	if c == Zlib {
		return 1 // Adler-32
	}
	return 0
}

// packWindow deflates a window for a Checkpoint.
func packWindow(w []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(w) / 2)
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	fw.Write(w)
	fw.Close()
	return b.Bytes()
}

// unpackWindow inflates c's window into dst (which must hold windowSize
// bytes) and returns it; a window that does not inflate to exactly
// c.WindowLen bytes is corrupt; a stored one that does not match its
// checksum gives an error matching ErrStoredWindow, one that cannot be
// read a *WindowReadError.
func unpackWindow(c *Checkpoint, dst []byte, fr io.ReadCloser) ([]byte, error) {
	packed, err := c.DeflatedWindow()
	if err != nil {
		return nil, err
	}
	fr.(flate.Resetter).Reset(bytes.NewReader(packed), nil)
	n, err := io.ReadFull(fr, dst[:c.WindowLen])
	if err == nil {
		var one [1]byte
		if k, _ := fr.Read(one[:]); k != 0 {
			err = fmt.Errorf("window longer than %d bytes", c.WindowLen)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint at bit %d: window does not inflate (%d bytes: %v)", c.In, n, err)
	}
	return dst[:n], nil
}
