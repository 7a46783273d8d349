package wlog

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// Layout constants of a segment.
const (
	PageSize   = 32 << 10 // bytes in a page
	HeaderSize = 7        // bytes in a fragment header
)

// Fragment kinds (the type byte's low three bits) and compression flags.
const (
	kindPageTerm = 0
	kindFull     = 1
	kindFirst    = 2
	kindMiddle   = 3
	kindLast     = 4

	kindMask  = 0x07
	snappyBit = 0x08
	zstdBit   = 0x10
)

// DefaultMaxRecord is the largest decompressed record a scan accepts: a
// compressed record that claims more is damage of kind codec.ErrLimit, so
// that no read ever holds more than this much of one record. Prometheus
// writes records of a few MiB at most (its checkpoints cut them at 1 MiB).
const DefaultMaxRecord = 64 << 20

// Compression says how a record's stored bytes are compressed.
type Compression uint8

// The compressions of Prometheus's writer (--storage.tsdb.wal-compression,
// --storage.tsdb.wal-compression-type).
const (
	None   Compression = iota // stored as is
	Snappy                    // a snappy block
	Zstd                      // a zstd frame
)

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Snappy:
		return "snappy"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// flag returns the type-byte bits of compression c.
func (c Compression) flag() byte {
	switch c {
	case Snappy:
		return snappyBit
	case Zstd:
		return zstdBit
	}
	return 0
}

// compressionOf returns the compression a type byte's flags say, and false
// for flags no writer sets (both, or reserved bits).
func compressionOf(typ byte) (Compression, bool) {
	switch typ &^ kindMask {
	case 0:
		return None, true
	case snappyBit:
		return Snappy, true
	case zstdBit:
		return Zstd, true
	}
	return None, false
}

// Options configure a scan or a read.
type Options struct {
	// Strict stops at the first damage: Err then returns a
	// *codec.CorruptError. By default damage is skipped and recorded.
	Strict bool
	// MaxRecord lowers the bound on the decompressed size of a record
	// below DefaultMaxRecord (0, or more than that: DefaultMaxRecord).
	MaxRecord int64
	// Start, when > 0, is where a scan begins: the end of an intact record
	// an earlier scan of the same segment found (Info.LastEnd), so that a
	// grown segment is read from there on.
	Start int64
}

func (o Options) maxRecord() int64 {
	if o.MaxRecord > 0 && o.MaxRecord < DefaultMaxRecord {
		return o.MaxRecord
	}
	return DefaultMaxRecord
}

// A Fragment is one fragment of a record: where its header is and how many
// data bytes follow it.
type Fragment struct {
	Off int64 // file offset of the fragment header
	Len int32 // data bytes
}

// A Record locates one record in a segment.
type Record struct {
	Off  int64       // file offset of the first fragment's header
	Len  int64       // stored data bytes, over all fragments
	Size int64       // the record's length once decompressed (Len when Comp is None)
	Comp Compression // how the stored bytes are compressed
	// Frags is nil when the fragments follow the writer's layout from Off
	// (see FragmentAt); otherwise it lists every fragment.
	Frags []Fragment
}

// End returns the offset just past the record's last fragment.
func (r Record) End() int64 {
	var end int64
	for i := 0; ; i++ {
		f, ok := FragmentAt(r, i)
		if !ok {
			return end
		}
		end = f.Off + HeaderSize + int64(f.Len)
	}
}

// FragmentAt returns the i-th fragment of rec: from rec.Frags when it is
// set, otherwise from the writer's layout — the first fragment at rec.Off
// carrying min(rec.Len, room-7) bytes, where room = PageSize -
// rec.Off%PageSize, and every next one at the next page start carrying
// min(remaining, PageSize-7). It returns false past the last fragment.
func FragmentAt(rec Record, i int) (Fragment, bool) {
	if i < 0 {
		return Fragment{}, false
	}
	if rec.Frags != nil {
		if i >= len(rec.Frags) {
			return Fragment{}, false
		}
		return rec.Frags[i], true
	}
	room := PageSize - rec.Off%PageSize
	if rec.Off < 0 || rec.Len < 0 || room < HeaderSize {
		return Fragment{}, false
	}
	first := min(rec.Len, room-HeaderSize)
	if i == 0 {
		return Fragment{Off: rec.Off, Len: int32(first)}, true
	}
	const per = PageSize - HeaderSize
	start := first + int64(i-1)*per
	if int64(i-1) > rec.Len/per+1 || start >= rec.Len {
		return Fragment{}, false
	}
	off := rec.Off - rec.Off%PageSize + int64(i)*PageSize
	return Fragment{Off: off, Len: int32(min(per, rec.Len-start))}, true
}

// Info sums up what a scan found.
type Info struct {
	Records  int64 // intact records
	Snappy   int64 // of which snappy-compressed
	Zstd     int64 // of which zstd-compressed
	LastEnd  int64 // end of the last intact record (Options.Start of a scan that goes on), or where the scan started
	Padded   bool  // zero-filled page tails seen (a closed page)
	Trailing int64 // bytes after LastEnd that are zeros (a closed segment's last page), not damage
}

// ProbePages is how many page starts Probe tries, so that a segment whose
// first fragment is damaged is still recognised.
const ProbePages = 4

// Probe reports whether r (size bytes) looks like a segment: a fragment of
// a kind the writer uses, with at least one data byte and a correct
// checksum, starts at one of the first ProbePages page starts.
func Probe(r io.ReaderAt, size int64) bool {
	var buf [PageSize]byte
	for p := int64(0); p < ProbePages && p*PageSize < size; p++ {
		off := p * PageSize
		n := min(PageSize, size-off)
		if n < HeaderSize+1 {
			return false
		}
		h := buf[:HeaderSize]
		if k, _ := r.ReadAt(h, off); k < HeaderSize {
			return false
		}
		kind := h[0] & kindMask
		_, flagsOK := compressionOf(h[0])
		ln := int64(binary.BigEndian.Uint16(h[1:]))
		if kind < kindFull || kind > kindLast || !flagsOK || ln == 0 || HeaderSize+ln > n {
			continue
		}
		sum := binary.BigEndian.Uint32(h[3:])
		d := buf[:ln]
		if k, _ := r.ReadAt(d, off+HeaderSize); int64(k) < ln {
			return false
		}
		if codec.CRC32C(d) == sum {
			return true
		}
	}
	return false
}

// damage is damage of kind k, with the kind's words as its reason.
func damage(off, n int64, k codec.DamageKind, err error) codec.Damage {
	return codec.Damage{Off: off, Len: n, Kind: k, Reason: k.String(), Err: err}
}

// corrupt is a *codec.CorruptError of this format.
func corrupt(off int64, reason string, err error) *codec.CorruptError {
	return &codec.CorruptError{Format: codec.PrometheusWAL, Off: off, Reason: reason, Err: err}
}
